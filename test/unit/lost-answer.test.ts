import { describe, expect, it } from 'vitest'
import { excuseReplayOfLostAnswer } from '../../src/scenarios/lost-answer.js'
import type { StepFailure } from '../../src/scenarios/report-types.js'

const replayed: StepFailure = { field: 'body.idempotency_replayed', expected: false, actual: true, message: 'expected false, got true' }
const debt: StepFailure = { field: 'body.activeLoans.-1.debt', expected: 2000, actual: 4000, message: 'expected 2000, got 4000' }

describe('a replay after a lost answer', () => {
  it('is accepted for an expected idempotency_replayed false once the request was sent again, and nothing else is', () => {
    expect(excuseReplayOfLostAnswer([replayed, debt], { attempts: 2, body: { idempotency_replayed: true } }, true)).toEqual([debt])
    expect(excuseReplayOfLostAnswer([replayed], { attempts: 4, body: { idempotency_replayed: true } }, true)).toEqual([])
  })

  it('is still a failure when the request went once: a first answer must say false', () => {
    expect(excuseReplayOfLostAnswer([replayed], { attempts: 1, body: { idempotency_replayed: true } }, true)).toBeUndefined()
  })

  it('is still a failure when only 429s made the client send it again: those refused it before acting', () => {
    expect(excuseReplayOfLostAnswer([replayed], { attempts: 2, body: { idempotency_replayed: true } }, false)).toBeUndefined()
  })

  it('excuses nothing else: an expected true, a missing field, or no such failure', () => {
    const expectedTrue: StepFailure = { ...replayed, expected: true, actual: false }
    expect(excuseReplayOfLostAnswer([expectedTrue], { attempts: 2, body: { idempotency_replayed: false } }, true)).toBeUndefined()
    expect(excuseReplayOfLostAnswer([{ ...replayed, actual: undefined }], { attempts: 2, body: {} }, true)).toBeUndefined()
    expect(excuseReplayOfLostAnswer([debt], { attempts: 2, body: { idempotency_replayed: true } }, true)).toBeUndefined()
  })
})
