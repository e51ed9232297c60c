import { DURATION_UNITS, readDurationText } from '../text/duration-units.js'
import { CliError } from './cli-error.js'

// Durations as the CLI's flags take them (500ms, 1.5s, 30d), with the range each flag allows.

type DurationUnit = keyof typeof DURATION_UNITS

/** A whole number of ms as its largest exact unit up to days: `3600000` is `1h`. */
export function formatDuration(ms: number): string {
  // Days at most: `serve --forget-idle-keys 7d` said "1w", which no one typed and the README never writes.
  const unit = (Object.keys(DURATION_UNITS) as DurationUnit[]).find((name) => name !== 'w' && ms % DURATION_UNITS[name] === 0) ?? 'ms'
  return `${ms / DURATION_UNITS[unit]}${unit}`
}

/** The longest duration any flag takes unless it says otherwise: about ten years. */
export const MAX_DURATION_MS = 3650 * DURATION_UNITS.d

/** The examples a malformed duration's message offers, those its flag's range takes (`--timeout` was offered 30d, past its 1h). */
const DURATION_EXAMPLES = ['500ms', '1.5s', '30s', '10m', '30d']

/**
 * Parses a duration such as `500ms`, `1.5s`, `90m` or `30d` into whole milliseconds. A flag passes
 * the longest that makes sense for it (and the shortest, 1 ms unless it says otherwise): outside
 * them is a typo, refused with the range.
 */
export function parseDuration(text: string, maxMs: number = MAX_DURATION_MS, minMs = 1): number {
  const ms = readDurationText(text)
  if (ms === undefined) throw new Error(`invalid duration "${text}": expected a number and ms, s, m, h, d or w (e.g. ${listDurationExamples(maxMs, minMs)})`)
  if (ms < minMs || ms > maxMs) throw new Error(`duration "${text}" is out of range: from ${formatDuration(minMs)} to ${formatDuration(maxMs)}`)
  return ms
}

/** "500ms, 1.5s, 30s or 10m": the examples from MIN_MS up to MAX_MS, else MAX_MS itself. */
function listDurationExamples(maxMs: number, minMs: number): string {
  const fitting = DURATION_EXAMPLES.filter((example) => readDurationText(example)! <= maxMs && readDurationText(example)! >= minMs)
  const examples = fitting.length > 0 ? fitting : [formatDuration(maxMs)]
  return examples.length === 1 ? examples[0]! : `${examples.slice(0, -1).join(', ')} or ${examples.at(-1)}`
}

/** A duration flag in ms, or undefined when not given; a bad one is a CliError that names FLAG. */
export function readDurationFlag(flag: string, text: string | undefined, maxMs: number, minMs = 1): number | undefined {
  if (text === undefined) return undefined
  try {
    return parseDuration(text, maxMs, minMs)
  } catch (error) {
    throw new CliError(`${flag}: ${(error as Error).message}`)
  }
}
