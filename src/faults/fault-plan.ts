import type { FaultRule, FaultsConfig } from './faults-schema.js'
import { createSeededRandom } from './seeded-random.js'

/** What the plan needs to know of a request. */
export interface FaultRequest {
  method: string
  path: string
  apiKey: string
  /** Idempotency-Key as sent, or null. */
  idempotencyKey: string | null
}

/** The fault that replaces or cuts a request's answer. */
export type FaultFailure =
  | { fault: 'status'; status: number; retryAfter?: number }
  | { fault: 'drop_before' }
  | { fault: 'drop_after' }

/** What to do to one request: a delay, a failure, or both. */
export interface FaultDecision {
  latencyMs?: number
  failure?: FaultFailure
}

/**
 * Idempotency-Keys a `first_attempt` rule remembers; the oldest are forgotten past this, so a
 * server left running does not grow without bound (a key that old is not being retried).
 */
export const FIRST_ATTEMPTS_KEPT = 100_000

/** Whether a rule's method, path and key filters all accept the request (absent ones accept all). */
export function matchesRule(rule: Pick<FaultRule, 'method' | 'path' | 'key'>, request: FaultRequest): boolean {
  if (rule.method !== undefined && rule.method !== request.method) return false
  if (rule.key !== undefined && rule.key !== request.apiKey) return false
  if (rule.path === undefined) return true
  return rule.path.endsWith('*') ? request.path.startsWith(rule.path.slice(0, -1)) : request.path === rule.path
}

/** A rule's selection: rate (seeded), every Nth, or the first request per Idempotency-Key. */
function createSelector(rule: FaultRule, seed: number): (request: FaultRequest) => boolean {
  if (rule.first_attempt) {
    const seen = new Set<string>()
    return (request) => {
      // No key (or an empty one, refused by the API as missing): nothing a retry could replay.
      if (!request.idempotencyKey) return false
      const slot = `${request.apiKey}\n${request.idempotencyKey}`
      if (seen.has(slot)) return false
      seen.add(slot)
      if (seen.size > FIRST_ATTEMPTS_KEPT) seen.delete(seen.values().next().value!)
      return true
    }
  }
  if (rule.every !== undefined) {
    const every = rule.every
    let count = 0
    return () => ++count % every === 0
  }
  const rate = rule.rate ?? 1
  const random = createSeededRandom(seed)
  // A draw per matching request even at rate 1 or 0 would change nothing; skipping it keeps
  // the sequence of one rule independent of the others' rates.
  return () => rate >= 1 || (rate > 0 && random() < rate)
}

/** A picked rule as a decision's part. */
function toFailure(rule: FaultRule): FaultFailure {
  if (rule.fault === 'status') return rule.retry_after === undefined ? { fault: 'status', status: rule.status } : { fault: 'status', status: rule.status, retryAfter: rule.retry_after }
  return { fault: rule.fault as 'drop_before' | 'drop_after' }
}

/** A ready fault plan: its seed (given or drawn), and the decision for each request in turn. */
export interface FaultPlan {
  seed: number
  decide(request: FaultRequest): FaultDecision | undefined
}

/**
 * Builds the per-server state of a fault injection config. Latency rules and failure rules
 * (status, drop_before, drop_after) are looked at apart, each in file order: the first rule of
 * each group whose filters match is the one, and its selection says whether this request is hit
 * (a later rule of the same group is not tried). Each rule draws from its own PRNG, seeded from
 * the seed and its position, so the same requests in the same order get the same faults.
 */
export function createFaultPlan(config: FaultsConfig): FaultPlan {
  const seed = config.seed ?? Math.floor(Math.random() * 2 ** 32)
  const rules = config.rules.map((rule, index) => ({ rule, selected: createSelector(rule, (seed + Math.imul(index + 1, 0x9e3779b9)) >>> 0) }))
  const latency = rules.filter(({ rule }) => rule.fault === 'latency')
  const failures = rules.filter(({ rule }) => rule.fault !== 'latency')
  return {
    seed,
    decide(request) {
      const slow = latency.find(({ rule }) => matchesRule(rule, request))
      const fail = failures.find(({ rule }) => matchesRule(rule, request))
      const decision: FaultDecision = {}
      if (slow?.selected(request) && slow.rule.fault === 'latency') decision.latencyMs = slow.rule.ms
      if (fail?.selected(request)) decision.failure = toFailure(fail.rule)
      return decision.latencyMs === undefined && decision.failure === undefined ? undefined : decision
    },
  }
}
