import { describe, expect, it } from 'vitest'
import { createRateLimiter, parseRateLimit } from '../../src/server/rate-limiter.js'

describe('parseRateLimit', () => {
  it('reads N/SECONDS and off, and rejects anything else', () => {
    expect(parseRateLimit('120/60')).toEqual({ limit: 120, windowSeconds: 60 })
    expect(parseRateLimit(' OFF ')).toBe(false)
    for (const bad of ['', '120', '0/60', '10/0', 'ten/60', '5/1.5']) expect(() => parseRateLimit(bad), bad).toThrow(/N\/SECONDS/)
    for (const huge of ['99999999999999999999/1', '60/9007199254740993']) expect(() => parseRateLimit(huge), huge).toThrow(`invalid rate limit "${huge}": N and SECONDS are whole numbers from 1 to 9007199254740991`)
  })
})

describe('createRateLimiter', () => {
  it('allows the limit inside a sliding window and reports when a slot frees', () => {
    const limiter = createRateLimiter({ limit: 3, windowSeconds: 10 })
    expect(limiter.check('k', 0)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 10 })
    expect(limiter.check('k', 4000)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 6 })
    expect(limiter.check('k', 5000).allowed).toBe(true)
    expect(limiter.check('k', 9999)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 })
    expect(limiter.check('k', 10000)).toMatchObject({ allowed: true, remaining: 0 })
    expect(limiter.check('other', 10000).remaining).toBe(2)
  })

  it('rounds the reset up to whole seconds, and peeks at the window without counting', () => {
    const limiter = createRateLimiter({ limit: 3, windowSeconds: 10 })
    limiter.check('k', 0)
    // 5.5 s until the request at 0 leaves the window: RateLimit-Reset says 6, never too early.
    expect(limiter.check('k', 4500)).toMatchObject({ remaining: 1, resetSeconds: 6 })
    expect(limiter.peek('k', 4600)).toMatchObject({ remaining: 1, resetSeconds: 6 })
    expect(limiter.peek('k', 10000)).toMatchObject({ remaining: 2, resetSeconds: 5 })
    expect(limiter.peek('k', 14500)).toMatchObject({ remaining: 3, resetSeconds: 10 })
  })

  it('forgets idle keys on sweep', () => {
    const limiter = createRateLimiter({ limit: 3, windowSeconds: 1 })
    limiter.check('a', 0)
    limiter.check('b', 900)
    limiter.sweep(1500)
    expect(limiter.trackedKeys).toBe(1)
  })

  it('keeps counting, and locks a key out no longer than one window, when the clock is set back', () => {
    const limiter = createRateLimiter({ limit: 3, windowSeconds: 10 })
    for (const at of [100_000, 101_000, 102_000]) expect(limiter.check('k', at).allowed).toBe(true)
    // The clock goes back an hour: the three requests still count, and free up within 10 s.
    const back = 102_000 - 3_600_000
    expect(limiter.check('k', back)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 10 })
    expect(limiter.peek('k', back + 9_999).allowed).toBe(false)
    expect(limiter.check('k', back + 10_000)).toMatchObject({ allowed: true, remaining: 2 })
  })
})
