#!/usr/bin/env node
// Thin shim: everything lives in the built CLI.
import { holdSignalsWhileLoading } from '../dist/cli/held-signals.js'
import { endOnSignalsAsInit } from '../dist/cli/init-signals.js'

// As PID 1 a signal is dropped until someone handles it; with --json one is held for the command
// to answer: both before the CLI's modules load, not after.
endOnSignalsAsInit()
holdSignalsWhileLoading(process.argv)
// Under a low open-file limit (a container's ulimit -n) the CLI's own modules may not load, and
// node would print its stack and exit 1: the limit is the user's to raise, as the CLI says.
const { runCli } = await import('../dist/cli/main.js').catch((error) => {
  if (error?.code !== 'EMFILE' && error?.code !== 'ENFILE') throw error
  process.stderr.write(`sandbox: too many open files (${error.message}): raise the open-file limit (ulimit -n; serve needs about 100 to start)\n`)
  process.exit(2)
})
runCli(process.argv)
