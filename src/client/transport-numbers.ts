import { isWholeNumber, showOptionValue } from '../text/whole-numbers.js'
import type { TransportOptions } from './request-types.js'

/** The longest wait a timer can hold: Node fires a longer one after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647

/**
 * What is wrong with the numbers of OPTIONS, worded to follow their name, or undefined. Taken as
 * they were, a NaN or negative timeoutMs timed out every request at once (reported as a server that
 * cannot be reached), and a negative or fractional `retries` sent nothing again.
 */
export function findTransportNumberProblem(options: Pick<TransportOptions, 'retries' | 'timeoutMs' | 'maxRetryAfterMs'>): string | undefined {
  const checks: Array<[keyof typeof options, number, number, string]> = [
    ['retries', 0, 100, 'a whole number from 0 to 100'],
    ['timeoutMs', 1, MAX_TIMER_MS, 'milliseconds, a whole number from 1'],
    ['maxRetryAfterMs', 0, MAX_TIMER_MS, 'milliseconds, a whole number from 0'],
  ]
  for (const [name, min, max, expected] of checks) {
    const value = options[name]
    if (value !== undefined && !isWholeNumber(value, min, max)) return `${name} ${showOptionValue(value)}: expected ${expected}`
  }
  return undefined
}
