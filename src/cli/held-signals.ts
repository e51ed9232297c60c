import { onStopSignals } from './stop-signals.js'

/** The first stop signal (SIGINT, SIGTERM, SIGHUP) that came while held, kept for the command to answer. */
let held: NodeJS.Signals | undefined
let unhold: (() => void) | undefined

const hold = (signal: NodeJS.Signals) => {
  held ??= signal
}

/**
 * With `--json`, a stop signal that comes while the CLI's modules still load (before the
 * command can print its INTERRUPTED document) is held rather than killing the process with
 * nothing on stdout: the command answers it as soon as it runs (releaseHeldSignal).
 */
export function holdSignalsWhileLoading(argv: string[]): void {
  if (unhold || !argv.includes('--json')) return
  unhold = onStopSignals(hold)
}

/** Stops holding; the signal that came meanwhile, if one did. */
export function releaseHeldSignal(): NodeJS.Signals | undefined {
  if (!unhold) return undefined
  unhold()
  unhold = undefined
  const signal = held
  held = undefined
  return signal
}
