#!/usr/bin/env node
// Thin shim: everything lives in the built CLI.
import { endOnSignalsAsInit } from '../dist/cli/init-signals.js'

// As PID 1 a signal is dropped until someone handles it: before the CLI's modules load, not after.
endOnSignalsAsInit()
const { runCli } = await import('../dist/cli/main.js')
runCli(process.argv)
