import { describe, expect, it } from 'vitest'
import { createExpiryTimes } from '../../src/server/expiry-times.js'
import { IDEMPOTENCY_RETENTION_MS, type SessionDoc } from '../../src/server/session-doc.js'

/** What the idempotency expiry check knows of each session between two checks. */

const DAY = IDEMPOTENCY_RETENTION_MS
const made = Date.parse('2026-11-20T10:00:00.000Z')

/** A document's parts the times are read from (the rest plays no part). */
const emptyDoc = () => ({ idempotency: [], response_batches: [] }) as unknown as SessionDoc

function docWithRecord(at: number): SessionDoc {
  return { ...emptyDoc(), idempotency: [{ key: 'k', fingerprint: 'f', status: 200, created_at: new Date(at).toISOString(), answer: '{}' }] }
}

describe('expiry times', () => {
  it('has a slot read when its first record is due, never when it holds none, and always when unknown', () => {
    const times = createExpiryTimes()
    expect(times.mayHoldExpired('a:default', made)).toBe(true)
    times.learn('a:default', docWithRecord(made))
    expect(times.mayHoldExpired('a:default', made + DAY - 1)).toBe(false)
    expect(times.mayHoldExpired('a:default', made + DAY)).toBe(true)
    times.learn('a:default', emptyDoc())
    expect(times.mayHoldExpired('a:default', made + 100 * DAY)).toBe(false)
    times.forget('a:default')
    expect(times.mayHoldExpired('a:default', made)).toBe(true)
  })

  it('keeps the time of a write made while the check read the older document', () => {
    const times = createExpiryTimes()
    times.learn('a:default', emptyDoc())
    const settle = times.beginRead('a:default')
    times.learn('a:default', docWithRecord(made + 1000))
    // The check read the version before the write, which held no record.
    settle(emptyDoc())
    expect(times.mayHoldExpired('a:default', made + 1000 + DAY)).toBe(true)
  })

  it('has a slot read again at the next check when the read failed, or the document changed in memory meanwhile', () => {
    const times = createExpiryTimes()
    times.learn('a:default', docWithRecord(made))
    times.beginRead('a:default')
    expect(times.mayHoldExpired('a:default', made)).toBe(true)
    const settle = times.beginRead('b:default')
    times.forget('b:default')
    settle(emptyDoc())
    expect(times.mayHoldExpired('b:default', made)).toBe(true)
  })

  it('forgets slots no longer stored', () => {
    const times = createExpiryTimes()
    for (const slot of ['a:default', 'b:default']) times.learn(slot, emptyDoc())
    times.keepOnly(['b:default'])
    expect(times.mayHoldExpired('a:default', made)).toBe(true)
    expect(times.mayHoldExpired('b:default', made)).toBe(false)
  })
})
