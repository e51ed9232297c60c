import { SetupError } from '../errors/setup-error.js'
import { isWholeNumber, showOptionValue } from '../text/whole-numbers.js'
import { MAX_RETRY_DELAY_MS } from '../webhooks/retry-schedule.js'
import type { SandboxOptions } from './sandbox-types.js'

/** The longest delivery timeout createSandbox takes: 10 minutes. */
const MAX_TIMEOUT_MS = 600_000

/**
 * Refuses the numeric options a library caller may get wrong, where the CLI's parsers never do:
 * taken as they were, a NaN or negative delay retried at once, a rate limit of 0 refused every
 * request, and a NaN timeout failed every delivery.
 */
export function checkNumberOptions(options: Pick<SandboxOptions, 'webhookRetrySchedule' | 'rateLimit' | 'webhookTimeoutMs' | 'forgetIdleKeysMs'>): void {
  const schedule = options.webhookRetrySchedule
  if (schedule !== undefined && (!Array.isArray(schedule) || schedule.length < 1 || !schedule.every((delay) => isWholeNumber(delay, 0, MAX_RETRY_DELAY_MS)))) {
    throw new SetupError(`webhookRetrySchedule ${showOptionValue(schedule)}: expected delays in milliseconds, at least one, whole numbers from 0 to ${MAX_RETRY_DELAY_MS} (24 hours), such as [5000, 30000]`)
  }
  const rule = options.rateLimit
  if (rule !== undefined && rule !== false && (typeof rule !== 'object' || rule === null || !isWholeNumber(rule.limit, 1) || !isWholeNumber(rule.windowSeconds, 1))) {
    throw new SetupError(`rateLimit ${showOptionValue(rule)}: expected { limit, windowSeconds }, whole numbers from 1 (or false for no limit)`)
  }
  const timeout = options.webhookTimeoutMs
  if (timeout !== undefined && !isWholeNumber(timeout, 1, MAX_TIMEOUT_MS)) {
    throw new SetupError(`webhookTimeoutMs ${showOptionValue(timeout)}: expected milliseconds, a whole number from 1 to ${MAX_TIMEOUT_MS}`)
  }
  const idle = options.forgetIdleKeysMs
  if (idle !== undefined && !isWholeNumber(idle, 1)) {
    throw new SetupError(`forgetIdleKeysMs ${showOptionValue(idle)}: expected milliseconds, a whole number from 1`)
  }
}
