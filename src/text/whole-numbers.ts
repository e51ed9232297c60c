import { inspect } from 'node:util'

/** Whether VALUE is a whole number from MIN to MAX: what a count, a port or milliseconds must be. */
export function isWholeNumber(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max
}

/** An option's value as its caller wrote it, for a message: NaN stays NaN (JSON makes it null), a string keeps its quotes. */
export function showOptionValue(value: unknown): string {
  return Array.isArray(value) ? `[${value.map((item) => inspect(item)).join(', ')}]` : inspect(value, { breakLength: Infinity })
}
