/** The first SIGINT or SIGTERM that came while held, kept for the command to answer. */
let held: NodeJS.Signals | undefined
let holding = false

const hold = (signal: NodeJS.Signals) => {
  held ??= signal
}

/**
 * With `--json`, a SIGINT or SIGTERM that comes while the CLI's modules still load (before the
 * command can print its INTERRUPTED document) is held rather than killing the process with
 * nothing on stdout: the command answers it as soon as it runs (releaseHeldSignal).
 */
export function holdSignalsWhileLoading(argv: string[]): void {
  if (holding || !argv.includes('--json')) return
  holding = true
  process.on('SIGINT', hold).on('SIGTERM', hold)
}

/** Stops holding; the signal that came meanwhile, if one did. */
export function releaseHeldSignal(): NodeJS.Signals | undefined {
  if (!holding) return undefined
  holding = false
  process.off('SIGINT', hold).off('SIGTERM', hold)
  const signal = held
  held = undefined
  return signal
}
