import { describe, expect, it } from 'vitest'
import { createFaultPlan, FIRST_ATTEMPTS_KEPT, matchesRule, type FaultRequest } from '../../src/faults/fault-plan.js'
import { parseFaults, type FaultsConfig } from '../../src/faults/faults-schema.js'

const KEY = 'sk_sandbox_fault_plan_key_0001'
const request = (extra: Partial<FaultRequest> = {}): FaultRequest => ({ method: 'POST', path: '/api/sandbox/loans', apiKey: KEY, idempotencyKey: null, ...extra })
/** The failure each of `count` requests gets, as `status 503` / `-`. */
function decideMany(config: FaultsConfig, count: number, make: (index: number) => FaultRequest = () => request()): string[] {
  const plan = createFaultPlan(config)
  return Array.from({ length: count }, (_, index) => {
    const failure = plan.decide(make(index))?.failure
    return failure ? (failure.fault === 'status' ? `status ${failure.status}` : failure.fault) : '-'
  })
}

describe('fault rule matching', () => {
  it('matches method, exact path, a trailing * prefix and the key; absent filters match all', () => {
    expect(matchesRule({}, request())).toBe(true)
    expect(matchesRule({ method: 'POST' }, request())).toBe(true)
    expect(matchesRule({ method: 'GET' }, request())).toBe(false)
    expect(matchesRule({ path: '/api/sandbox/loans' }, request())).toBe(true)
    expect(matchesRule({ path: '/api/sandbox/loans' }, request({ path: '/api/sandbox/loans/flow' }))).toBe(false)
    expect(matchesRule({ path: '/api/sandbox/loans*' }, request({ path: '/api/sandbox/loans/flow' }))).toBe(true)
    expect(matchesRule({ path: '/api/sandbox/loans/*' }, request())).toBe(false)
    expect(matchesRule({ key: KEY }, request())).toBe(true)
    expect(matchesRule({ key: `${KEY}x` }, request())).toBe(false)
  })

  it('takes the first rule of each group whose filters match, even when its selection then says no', () => {
    const plan = createFaultPlan({ rules: [
      { method: 'GET', fault: 'drop_before' },
      { path: '/api/sandbox/loans', fault: 'status', status: 503, rate: 0 },
      { fault: 'status', status: 500 },
      { fault: 'latency', ms: 50 },
      { fault: 'latency', ms: 900 },
    ] })
    // The 503 rule matches and is not selected (rate 0): the 500 rule after it is not tried.
    expect(plan.decide(request())).toEqual({ latencyMs: 50 })
    expect(plan.decide(request({ path: '/api/sandbox/state' }))).toEqual({ latencyMs: 50, failure: { fault: 'status', status: 500 } })
    expect(plan.decide(request({ method: 'GET' }))).toEqual({ latencyMs: 50, failure: { fault: 'drop_before' } })
  })

  it('answers undefined when nothing applies', () => {
    expect(createFaultPlan({ rules: [{ method: 'DELETE', fault: 'drop_after' }] }).decide(request())).toBeUndefined()
  })
})

describe('fault selection', () => {
  it('rate: the same seed gives the same faults, another seed others, and about the rate asked', () => {
    const config = (seed: number): FaultsConfig => ({ seed, rules: [{ fault: 'status', status: 503, rate: 0.3 }] })
    const first = decideMany(config(42), 1000)
    expect(decideMany(config(42), 1000)).toEqual(first)
    expect(decideMany(config(43), 1000)).not.toEqual(first)
    const hit = first.filter((fault) => fault !== '-').length
    expect(hit).toBeGreaterThan(240)
    expect(hit).toBeLessThan(360)
  })

  it('rate: a seed drawn when the file gives none, and told so the run can be repeated', () => {
    const plan = createFaultPlan({ rules: [{ fault: 'drop_after', rate: 0.5 }] })
    expect(Number.isInteger(plan.seed)).toBe(true)
    const again = decideMany({ seed: plan.seed, rules: [{ fault: 'drop_after', rate: 0.5 }] }, 50)
    expect(Array.from({ length: 50 }, () => plan.decide(request())?.failure?.fault ?? '-')).toEqual(again)
  })

  it('every: the Nth, 2Nth, ... matching request', () => {
    expect(decideMany({ rules: [{ fault: 'drop_before', every: 3 }] }, 7)).toEqual(['-', '-', 'drop_before', '-', '-', 'drop_before', '-'])
  })

  it('first_attempt: only the first request with each Idempotency-Key of each key, and never one without a key or with an empty one', () => {
    const config: FaultsConfig = { rules: [{ fault: 'drop_after', first_attempt: true }] }
    const keys = ['a', 'a', 'b', 'a', 'b', 'c']
    expect(decideMany(config, keys.length, (index) => request({ idempotencyKey: keys[index]! })))
      .toEqual(['drop_after', '-', 'drop_after', '-', '-', 'drop_after'])
    // Another API key's same Idempotency-Key is another operation.
    expect(decideMany(config, 2, (index) => request({ idempotencyKey: 'same', apiKey: `${KEY}${index}` }))).toEqual(['drop_after', 'drop_after'])
    expect(decideMany(config, 2, () => request({ method: 'GET' }))).toEqual(['-', '-'])
    // An empty Idempotency-Key is refused as missing: a client cannot retry it either.
    expect(decideMany(config, 2, () => request({ idempotencyKey: '' }))).toEqual(['-', '-'])
  })

  it('first_attempt forgets the oldest keys past its limit rather than growing without bound', () => {
    const plan = createFaultPlan({ rules: [{ fault: 'drop_after', first_attempt: true }] })
    for (let index = 0; index <= FIRST_ATTEMPTS_KEPT; index++) plan.decide(request({ idempotencyKey: `k${index}` }))
    expect(plan.decide(request({ idempotencyKey: `k${FIRST_ATTEMPTS_KEPT}` }))).toBeUndefined()
    expect(plan.decide(request({ idempotencyKey: 'k0' }))?.failure).toEqual({ fault: 'drop_after' })
  })
})

describe('fault file validation', () => {
  const problems = (value: unknown) => {
    try {
      parseFaults(value, '--faults f.json')
      return ''
    } catch (error) {
      expect((error as Error).name).toBe('SetupError')
      return (error as Error).message
    }
  }

  it('accepts the documented example', () => {
    expect(problems({ seed: 42, rules: [
      { method: 'POST', path: '/api/sandbox/loans/flow', fault: 'drop_after', first_attempt: true },
      { path: '/api/sandbox/*', fault: 'status', status: 503, rate: 0.05, retry_after: 1 },
      { fault: 'latency', ms: 300, rate: 0.1 },
    ] })).toBe('')
  })

  it('names the file and each bad field by its path', () => {
    expect(problems({ rules: [{ fault: 'status', status: 404 }] })).toMatch(/^--faults f\.json is not a valid fault injection file: rules\.0\.status: /)
    expect(problems({ rules: [{ fault: 'slow' }] })).toContain('rules.0.fault')
    expect(problems({ rules: [{ fault: 'latency' }] })).toContain('rules.0.ms')
    expect(problems({ rules: [{ fault: 'drop_before', rate: 1.5 }] })).toContain('rules.0.rate')
    expect(problems({ rules: [{ fault: 'drop_before', every: 0 }] })).toContain('rules.0.every')
    expect(problems({ rules: [{ fault: 'drop_before', method: 'post' }] })).toContain('rules.0.method')
    expect(problems({ rules: [{ fault: 'drop_before', path: 'api/*' }] })).toContain('rules.0.path: must start with /')
    expect(problems({ rules: [{ fault: 'drop_before', path: '/api/*/flow' }] })).toContain('rules.0.path: only a trailing * is allowed')
    // Rules that could never fault a request, which a partner would otherwise wait in vain to see.
    expect(problems({ rules: [{ fault: 'drop_before', path: '/api/sandbox/loans/flow/' }] })).toContain('rules.0.path: API paths have no trailing / (one gets a 404, which is never faulted): remove it, or end a prefix with *')
    expect(problems({ rules: [{ fault: 'drop_before', path: '/api/sandbox/state?x=1' }] })).toContain('rules.0.path: a path is matched without its query')
    expect(problems({ rules: [{ fault: 'drop_before', path: '/api/sandbox/*' }, { fault: 'drop_before', path: '/' }, { fault: 'drop_before', path: '/*' }] })).toBe('')
    // A key as the logs show it, or one the API refuses, would fault no request either.
    expect(problems({ rules: [{ fault: 'drop_before', key: 'sk_sandbox_faul…0001' }] })).toContain('rules.0.key: that is a key as logs show it, masked: give the whole key')
    expect(problems({ rules: [{ fault: 'drop_before', key: 'sk_live_abcdefghijklmnop' }] })).toContain('rules.0.key: not a sandbox API key (sk_sandbox_ followed by at least 16 letters, digits or _)')
    expect(problems({ rules: [{ fault: 'drop_before', key: KEY }] })).toBe('')
    expect(problems({ rules: [{}, { fault: 'drop_before', rate: 0.5, every: 2 }] })).toContain('rules.1.every: use one of rate, every and first_attempt per rule')
    // A misspelt field names the one it meant.
    expect(problems({ rules: [{ fault: 'drop_before', first_atempt: true }] })).toContain('rules.0: Unrecognized key: "first_atempt" (did you mean first_attempt?)')
    expect(problems({ rules: [{ fault: 'latency', ms: 5, methd: 'POST', bogus: 1 }] })).toContain('rules.0: Unrecognized keys: "methd", "bogus" (did you mean method for "methd"?)')
    expect(problems({ seed: -1, rules: [] })).toContain('seed')
    expect(problems({ rule: [] })).toContain('(root): Unrecognized key: "rule" (did you mean rules?)')
  })
})
