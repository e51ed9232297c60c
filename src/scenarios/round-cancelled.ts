import type { ScenarioChange } from './watch-scenarios.js'

/**
 * Why a round's signal aborted: a change to the watched files (`changes`, empty for a rerun asked
 * for) that starts the next round, or the watch closing (`closing`).
 */
export class RoundCancelledError extends Error {
  override name = 'AbortError'
  constructor(readonly changes: ScenarioChange[], readonly closing = false) {
    super(closing ? 'round cancelled: the watch closed' : changes.length === 0 ? 'round cancelled: a rerun was asked for' : 'round cancelled: the watched files changed')
  }
}

/**
 * Whether ERROR is how a run ended on SIGNAL's abort: the reason itself (fetch, runScenarios) or,
 * as Node's own APIs reject (timers/promises, events.once, fs), an AbortError caused by it.
 */
export function isCancelledBy(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted && (error === signal.reason || (error instanceof Error && error.name === 'AbortError' && error.cause === signal.reason))
}
