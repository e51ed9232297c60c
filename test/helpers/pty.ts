import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { stripVTControlCharacters } from 'node:util'
import { BIN } from './cli.js'

/**
 * The CLI under a real pseudo-terminal, without a native dependency: util-linux `script` opens a
 * pty, runs the command in it, copies our piped stdin to the pty (keystrokes) and the pty to its
 * stdout (what the user would see). `-e` exits with the child's code, `-f` flushes each write,
 * `-q` drops script's own banner, `/dev/null` discards the typescript file.
 *
 * `script -e` reports a child killed by a signal as 128 + the signal, like a shell: 130 for
 * SIGINT, the same as process.exit(130). Tests tell the two apart by the terminal's echo: the
 * line discipline echoes `^C` when Ctrl+C becomes SIGINT, never while a prompt holds raw mode.
 */

/** Empty when `script` works here; otherwise why the pty tests are skipped. */
export const PTY_UNAVAILABLE = probeScript()

function probeScript(): string {
  // The util-linux flags, with piped stdin, must run a command and pass its exit code through
  // (BSD/macOS and BusyBox `script` take other flags).
  const probe = spawnSync('script', ['-qfec', 'exit 3', '/dev/null'], { input: '', timeout: 5000, env: { PATH: process.env.PATH, SHELL: '/bin/sh' } })
  if (probe.error) return `no usable util-linux \`script\` for a pseudo-terminal (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}); install util-linux`
  if (probe.status !== 3) return `\`script -qfec\` does not pass the exit code through (got ${probe.status}): not util-linux script`
  return ''
}

const running = new Set<ChildProcess>()

/** Kills every pty session still running (call in afterEach). */
export function killPtys(): void {
  // The process group: script, its shell and the CLI, so no node is left behind.
  for (const child of running) {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      child.kill('SIGKILL')
    }
  }
  running.clear()
}

/** POSIX shell quoting, for the command line `script -c` hands to /bin/sh. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

export interface PtySession {
  /** Sends keystrokes, as typed at the terminal. */
  write(keys: string): void
  /** Everything the terminal received, escape sequences included. */
  raw(): string
  /** What was shown: escape sequences stripped, CRLF as LF. From `since` (a `mark()`) on. */
  text(since?: number): string
  /** A position in the output, to wait for what comes after it. */
  mark(): number
  /** Resolves once the shown text (from `since` on) matches; rejects after `timeoutMs`, with the screen so far. */
  waitFor(pattern: string | RegExp, options?: { since?: number; timeoutMs?: number }): Promise<void>
  /** Writes `keys`, then waits until what is shown after them matches `until` (the redraw). */
  press(keys: string, until: string | RegExp): Promise<void>
  /** The exit code `script -e` reports (128 + n for a signal), or rejects after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null>
  /** Sends a signal to the CLI itself (not to script), as `kill` or `timeout` would. */
  signal(signal: NodeJS.Signals): void
  /** Closes the terminal, as closing its window does: script dies, and the kernel hangs the pty up. */
  closeTerminal(): void
}

export interface PtyOptions {
  env?: Record<string, string>
  cwd?: string
  /** Shell redirections after the command, e.g. `< /dev/null` or `| cat`, to take one side off the pty. */
  redirect?: string
  /**
   * The shell command line that runs the CLI, given its quoted command line (`exec CLI` by
   * default), e.g. one that waits for it and writes down its exit status.
   */
  wrap?: (cli: string) => string
}

/**
 * Runs `sandbox ARGS` in a pseudo-terminal of 100x30. The environment is a clean one (plus
 * `options.env`): a CI's `CI`, `FORCE_COLOR`, `NO_COLOR` or `SANDBOX_*` variables would change
 * the colours or the command's defaults, and a TERM is set so chalk sees a colour terminal.
 */
export function runInPty(args: string[], options: PtyOptions = {}): PtySession {
  const cli = [process.execPath, BIN, ...args].map(shellQuote).join(' ')
  // script leaves the pty at 0x0; a real terminal has a size, and inquirer wraps at the width.
  const line = `${cli}${options.redirect ? ` ${options.redirect}` : ''}`
  const command = `stty cols 100 rows 30; ${options.wrap ? options.wrap(line) : `exec ${line}`}`
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', TERM: 'xterm-256color', SHELL: '/bin/sh', ...options.env }
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, cwd: options.cwd, detached: true })
  running.add(child)
  let out = ''
  child.stdout!.on('data', (chunk) => { out += chunk })
  child.stderr!.on('data', (chunk) => { out += chunk })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => {
    running.delete(child)
    resolve(code ?? (signal ? -1 : null))
  }))
  const text = (since = 0) => stripVTControlCharacters(out.slice(since)).replace(/\r\n/g, '\n')
  const waitFor = (pattern: string | RegExp, { since = 0, timeoutMs = 10_000 } = {}) => new Promise<void>((resolve, reject) => {
    const matches = () => (typeof pattern === 'string' ? text(since).includes(pattern) : pattern.test(text(since)))
    if (matches()) return resolve()
    let settled = false
    const settle = (error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.stdout!.off('data', check)
      if (error) reject(error)
      else resolve()
    }
    const check = () => { if (matches()) settle() }
    const timer = setTimeout(() => settle(new Error(`timed out waiting for ${String(pattern)} in the terminal; it shows:\n${text(since)}`)), timeoutMs)
    child.stdout!.on('data', check)
    void exit.then((code) => settle(matches() ? undefined : new Error(`exited with ${code} before ${String(pattern)} was shown; the terminal shows:\n${text(since)}`)))
  })
  return {
    write: (keys) => { child.stdin!.write(keys) },
    raw: () => out,
    text,
    mark: () => out.length,
    waitFor,
    press: async (keys, until) => {
      const since = out.length
      child.stdin!.write(keys)
      await waitFor(until, { since })
    },
    signal: (signal) => { process.kill(childOf(child.pid!), signal) },
    closeTerminal: () => { child.kill('SIGKILL') },
    exited: (timeoutMs = 15_000) => Promise.race([
      exit,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms; the terminal shows:\n${text()}`)), timeoutMs).unref()),
    ]),
  }
}

/** The process script started: the shell, which became the CLI with `exec` (Linux /proc, as script is util-linux). */
function childOf(parent: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // Field 4 is the parent pid; the command name (field 2) may hold spaces, so count from its `)`.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) return Number(entry)
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`no child of script (pid ${parent}) in /proc`)
}

/** True when the output leaves the cursor hidden: its last hide (`ESC[?25l`) is not followed by a show (`ESC[?25h`). */
export function leavesCursorHidden(raw: string): boolean {
  return raw.lastIndexOf('\u001b[?25l') > raw.lastIndexOf('\u001b[?25h')
}

/** SGR colour sequences (foreground/background), as chalk writes them; bold or dim alone do not count. */
export const COLOUR = /\u001b\[(?:3[0-79]|9[0-7]|4[0-79]|10[0-7])m/

/** Keys as a terminal sends them. */
export const KEY = { up: '\u001b[A', down: '\u001b[B', enter: '\r', space: ' ', ctrlC: '\u0003' } as const
