import type { Command } from 'commander'
import { printInterruptedAsJson, printsOneJsonDocument } from './cli-error.js'
import { drainOutput } from './drain-output.js'
import { onStopSignals } from './stop-signals.js'

/**
 * With `--json`, SIGINT, SIGTERM or SIGHUP (Ctrl+C, a cancelled CI job, `timeout`, a closed
 * terminal) stopping COMMAND before its report still leaves one JSON document on stdout: the INTERRUPTED error. Then the
 * signal is raised again, so the process ends killed by it as without `--json` (a shell sees 130,
 * 143 or 129 and stops its script; an exit(130) would let the script go on). As PID 1 the raised
 * signal would be dropped: init-signals.ts ends the process with that code instead.
 */
export function printDocumentOnSignals(command: Command): void {
  const onSignal = (signal: NodeJS.Signals) => {
    // A command that switched to JSON lines (a --follow) ends on a signal as it decides.
    if (!printsOneJsonDocument(command)) return
    // A second signal while the document drains kills at once.
    off()
    const message = `stopped by ${signal} before the report was complete`
    process.stderr.write(`sandbox: ${message}\n`)
    printInterruptedAsJson(command, message)
    void drainOutput().then(() => process.kill(process.pid, signal))
  }
  const off = onStopSignals(onSignal)
}
