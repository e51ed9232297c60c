import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => {
  vi.useRealTimers()
  await api?.sandbox.close()
})

/** Loan A (90,000), then loan B (30,000), then A increased by 20,000: the volume crosses silver (100,000) between B and the increase. */
async function issueThenIncrease(): Promise<{ entries: Array<{ loan_id: string; origination_fee: number; reward_percent: number; amount_usd: number }>; accrued: number; a: string; b: string }> {
  api = await createTestApi({ config: { rates: { btc_usd: 300_000 } } })
  const a = (await api.post('/api/sandbox/loans', { collateral_btc: 1, loan_amount: 90_000 })).body.activeLoans[0].id
  const b = (await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 30_000 })).body.activeLoans[1].id
  expect((await api.post(`/api/sandbox/loans/${a}/action`, { action: 'increase_loan', amount: 20_000 })).status).toBe(200)
  const partner = (await api.get('/api/sandbox/partner')).body
  return { entries: partner.rewards.entries, accrued: partner.rewards.accrued_usd, a, b }
}

describe('partner rewards accrue in the order loans were issued and increased', () => {
  it('an increase made after another loan was issued counts after it, even within the same millisecond', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-03-01T12:00:00.000Z'))
    const { entries, accrued, a, b } = await issueThenIncrease()
    // B is issued at 90,000 of volume (bronze, 10 %); the increase comes at 120,000 (silver, 15 %).
    expect(entries.map((e) => [e.loan_id, e.origination_fee, e.reward_percent, e.amount_usd])).toEqual([
      [a, 900, 10, 90],
      [b, 300, 10, 30],
      [a, 200, 15, 30],
    ])
    expect(accrued).toBe(150)
  })

  it('and after the host clock was set back', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-03-01T12:00:00.000Z'))
    api = await createTestApi({ config: { rates: { btc_usd: 300_000 } } })
    const a = (await api.post('/api/sandbox/loans', { collateral_btc: 1, loan_amount: 90_000 })).body.activeLoans[0].id
    const b = (await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 30_000 })).body.activeLoans[1].id
    vi.setSystemTime(new Date('2026-03-01T11:00:00.000Z'))
    const increased = await api.post(`/api/sandbox/loans/${a}/action`, { action: 'increase_loan', amount: 20_000 })
    const partner = (await api.get('/api/sandbox/partner')).body
    expect(partner.rewards.entries.map((e: { loan_id: string; reward_percent: number }) => [e.loan_id, e.reward_percent])).toEqual([[a, 10], [b, 10], [a, 15]])
    expect(partner.rewards.accrued_usd).toBe(150)
    // The change is stamped after the loan's earlier ones, not an hour before them.
    const loan = increased.body.activeLoans[0]
    expect(loan.updatedAt > loan.createdAt).toBe(true)
  })
})
