import { readDurationText } from '../text/duration-units.js'

/** The default schedule: delays after the first try (decisions.md: 5 s, 30 s, 2 min, 10 min). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000]

/** How many delays a schedule may have. */
const MAX_RETRY_DELAYS = 20

/** The longest delay of a schedule: a day. Longer ones would outlast any test, and Node's timers (24.8 days). */
export const MAX_RETRY_DELAY_MS = 86_400_000

/** Parses `5s,30s,2m,10m` (written as the CLI's other durations: 500ms, 1.5s, 1d) into delays in milliseconds. */
export function parseRetrySchedule(text: string): number[] {
  const delays = text.split(',').map((part) => {
    const delay = readDurationText(part)
    if (delay === undefined) throw new Error(`invalid retry schedule "${text}": expected delays such as 5s,30s,2m,10m`)
    return delay
  })
  if (delays.length === 0 || delays.length > MAX_RETRY_DELAYS) throw new Error(`invalid retry schedule "${text}": give 1 to ${MAX_RETRY_DELAYS} delays`)
  if (delays.some((delay) => delay > MAX_RETRY_DELAY_MS)) throw new Error(`invalid retry schedule "${text}": each delay at most 24h`)
  return delays
}

/**
 * The wait after a delivery's attempt number `attempts` fails, counted from where the retry
 * endpoint last restarted its schedule; undefined when that was the last attempt.
 */
export function findRetryDelay(scheduleMs: readonly number[], attempts: number, scheduleBase = 0): number | undefined {
  return scheduleMs[attempts - 1 - scheduleBase]
}
