import { isatty } from 'node:tty'

/** Which of stdin, stdout and stderr were a terminal when the CLI started. */
const STARTED_ON_TERMINAL = [0, 1, 2].map((fd) => isatty(fd))

let installed = false

/** True once a terminal the CLI started on is gone (closed window, dropped ssh session): it no longer answers as one. */
export function isTerminalGone(): boolean {
  return STARTED_ON_TERMINAL.some((was, fd) => was && !isatty(fd))
}

/**
 * Once its terminal is gone, the process ends by SIGHUP (129 to whoever waits for it) rather than
 * with its exit code: on exit node restores the terminal's modes, and a node without
 * nodejs/node#58200 (20.20 among them) aborts when that fails (SIGABRT: status 134, a core dump, a
 * crash report). A command stopped by its terminal's SIGHUP has done its clean stop by then; only
 * the code, which no terminal is left to show, is given up.
 */
export function endByHangupOnceTerminalGone(): void {
  if (installed || !STARTED_ON_TERMINAL.some(Boolean)) return
  installed = true
  process.on('exit', () => {
    if (!isTerminalGone()) return
    // Without a listener node stops catching SIGHUP: the default ends the process at once.
    process.removeAllListeners('SIGHUP')
    process.kill(process.pid, 'SIGHUP')
  })
}
