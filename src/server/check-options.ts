import { inspect } from 'node:util'
import { SetupError } from '../errors/setup-error.js'
import { MAX_RETRY_DELAY_MS } from '../webhooks/retry-schedule.js'
import type { SandboxOptions } from './sandbox-types.js'

/** The longest delivery timeout createSandbox takes: 10 minutes. */
const MAX_TIMEOUT_MS = 600_000

/** A value as written in code (NaN stays NaN, as JSON would make it null). */
const show = (value: unknown): string => (Array.isArray(value) ? `[${value.map((item) => inspect(item)).join(', ')}]` : inspect(value, { breakLength: Infinity }))

const isWhole = (value: unknown, min: number, max: number): boolean => Number.isInteger(value) && (value as number) >= min && (value as number) <= max

/**
 * Refuses the numeric options a library caller may get wrong, where the CLI's parsers never do:
 * taken as they were, a NaN or negative delay retried at once, a rate limit of 0 refused every
 * request, and a NaN timeout failed every delivery.
 */
export function checkNumberOptions(options: Pick<SandboxOptions, 'webhookRetrySchedule' | 'rateLimit' | 'webhookTimeoutMs'>): void {
  const schedule = options.webhookRetrySchedule
  if (schedule !== undefined && (!Array.isArray(schedule) || schedule.length < 1 || !schedule.every((delay) => isWhole(delay, 0, MAX_RETRY_DELAY_MS)))) {
    throw new SetupError(`webhookRetrySchedule ${show(schedule)}: expected delays in milliseconds, at least one, whole numbers from 0 to ${MAX_RETRY_DELAY_MS} (24 hours), such as [5000, 30000]`)
  }
  const rule = options.rateLimit
  if (rule !== undefined && rule !== false && (typeof rule !== 'object' || rule === null || !isWhole(rule.limit, 1, Number.MAX_SAFE_INTEGER) || !isWhole(rule.windowSeconds, 1, Number.MAX_SAFE_INTEGER))) {
    throw new SetupError(`rateLimit ${show(rule)}: expected { limit, windowSeconds }, whole numbers from 1 (or false for no limit)`)
  }
  const timeout = options.webhookTimeoutMs
  if (timeout !== undefined && !isWhole(timeout, 1, MAX_TIMEOUT_MS)) {
    throw new SetupError(`webhookTimeoutMs ${show(timeout)}: expected milliseconds, a whole number from 1 to ${MAX_TIMEOUT_MS}`)
  }
}
