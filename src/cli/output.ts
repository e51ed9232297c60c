import chalk from 'chalk'

/**
 * Colour only for a person at a terminal: off when stdout is not a TTY, or under NO_COLOR set to
 * anything but the empty string (no-color.org: an empty value is as good as unset, so a CI that
 * templates `NO_COLOR=$VAR` with nothing in it keeps colour). FORCE_COLOR wins over both, as in
 * Node itself: CI systems whose logs show ANSI colours set it, and chalk has already taken its
 * level from it (`0` or `false`: none; empty, `1` or `true`: 16 colours; `2`, `3`: more).
 */
export function configureColor(stream: NodeJS.WriteStream = process.stdout): void {
  if (process.env.FORCE_COLOR !== undefined) return
  if (process.env.NO_COLOR || !stream.isTTY) chalk.level = 0
}

// Commands load this module lazily (chalk is not needed for --help), so it configures itself.
configureColor()

/**
 * A note for a person (a proxy in use, where a receiver listens): dim, through WRITE, beside the
 * text on stdout; with JSON on stdout, on stderr after `sandbox: `, so stdout holds the document only.
 */
export function createNoteWriter(json: boolean | undefined, write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): (line: string) => void {
  return json ? (line) => process.stderr.write(`sandbox: ${line}\n`) : (line) => write(chalk.dim(line))
}

/** Colours of statuses in request lines. */
export function colorStatus(status: number): string {
  const text = String(status)
  // 0: no answer at all (a connection a fault injection dropped).
  if (status >= 500 || status < 100) return chalk.red(text)
  if (status >= 400) return chalk.yellow(text)
  return chalk.green(text)
}

/** `1 request`, `2 requests`: a count with its noun (regular plurals only). */
export function formatCount(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/**
 * `HH:MM:SS` of an ISO time on the local clock, for log lines: a reader holds them against their
 * own clock (in UTC+5:45 a UTC one read 5:45 off). `--json-logs` and `logs` keep the ISO time.
 */
export function formatClock(iso: string): string {
  const at = new Date(iso)
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':')
}

/**
 * Body field names as a log line shows them, `, ` between them: a name a client chose may hold a
 * comma, a space or a quote itself, so any but a plain one (and the `+N more` marker) is quoted.
 */
export function formatFieldNames(names: string[]): string {
  return names.map((name) => (/^([\w.-]+|\+\d+ more)$/.test(name) ? name : JSON.stringify(name))).join(', ')
}

export { chalk }
