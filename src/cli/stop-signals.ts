/**
 * The signals that ask a command to stop: Ctrl+C (SIGINT); `kill`, `timeout` or a supervisor
 * (SIGTERM); the terminal closed or the ssh session dropped (SIGHUP). Every command answers the
 * three alike: node's default for SIGHUP, dying at once, left serve's lock behind and lost the
 * request log of its last half second.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** One of STOP_SIGNALS. */
export type StopSignal = (typeof STOP_SIGNALS)[number]

/** The exit status a shell reports for a process these signals killed: 128 + the signal's number. */
export const SIGNAL_EXIT_CODES: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }

/** SIGNAL's exit status as a shell counts it (130 for anything else: it came from Ctrl+C). */
export function toSignalExitCode(signal: unknown): number {
  return SIGNAL_EXIT_CODES[signal as StopSignal] ?? 130
}

/**
 * Calls LISTENER on every stop signal (first among the process's listeners with `prepend`);
 * returns what removes it again.
 */
export function onStopSignals(listener: (signal: NodeJS.Signals) => void, { prepend = false } = {}): () => void {
  for (const signal of STOP_SIGNALS) {
    if (prepend) process.prependListener(signal, listener)
    else process.on(signal, listener)
  }
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, listener)
  }
}

/**
 * Calls LISTENER on the first stop signal only: a second one (the stop hangs) then ends the
 * process as it would without a handler.
 */
export function onFirstStopSignal(listener: (signal: NodeJS.Signals) => void): () => void {
  const off = onStopSignals((signal) => {
    off()
    listener(signal)
  })
  return off
}
