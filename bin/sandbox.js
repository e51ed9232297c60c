#!/usr/bin/env node
// Thin shim: everything lives in the built CLI.
import { holdSignalsWhileLoading } from '../dist/cli/held-signals.js'
import { endOnSignalsAsInit } from '../dist/cli/init-signals.js'

// As PID 1 a signal is dropped until someone handles it; with --json one is held for the command
// to answer: both before the CLI's modules load, not after.
endOnSignalsAsInit()
holdSignalsWhileLoading(process.argv)
const { runCli } = await import('../dist/cli/main.js')
runCli(process.argv)
