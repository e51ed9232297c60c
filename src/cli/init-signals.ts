import { SIGNAL_EXIT_CODES } from './stop-signals.js'

let installed = false

/**
 * As PID 1 (a container's entrypoint without an init such as `docker run --init` or tini), the
 * kernel drops every signal the process does not handle itself. `docker stop` then waited its
 * 10 s for nothing and killed; Ctrl+C in `docker run -it` did nothing; `run` went on to the end;
 * and `run --json`, which prints its INTERRUPTED document and then raises the signal again to
 * end by it, printed its report as a second document after it. So as PID 1 a SIGINT, SIGTERM or
 * SIGHUP that no command handles ends the process as the signal would end any other: exit 130,
 * 143 or 129.
 */
export function endOnSignalsAsInit(pid: number = process.pid): void {
  if (pid !== 1 || installed) return
  installed = true
  for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
    // Registered before any command's own handler: those (serve's stop, webhook listen's) decide.
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(code)
    })
  }
}
