import { onStopSignals } from './stop-signals.js'

/**
 * Runs a prompt that SIGINT, SIGTERM or SIGHUP sent to the process (`kill`, `timeout`, a
 * supervisor, its terminal closed) aborts, with the signal's name as the abort's cause (main.ts
 * exits 130, 143 or 129 on it). Inquirer only hooks signals through signal-exit, which re-raises
 * the signal before the prompt's cleanup runs: node died with the terminal's cursor still hidden.
 * Our own listener stops signal-exit re-raising, and the abort lets inquirer close the prompt and
 * show the cursor first.
 * (Ctrl+C typed at the prompt is a keypress in raw mode, not a signal: inquirer handles it.)
 */
export async function withPromptSignals<T>(ask: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal)
  const off = onStopSignals(onSignal)
  try {
    return await ask(controller.signal)
  } finally {
    off()
  }
}
