import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { viewPartner, type DefaultPartnerProfile, type PartnerLevel } from '../../src/domain/partner.js'
import type { Loan, LoanBook } from '../../src/domain/types.js'

// Partner levels and rewards for inputs the fixtures never produce: a table whose lowest level
// needs volume, and a loan history with no origination fee entry after its issue.
const defaults = JSON.parse(readFileSync(new URL('../../fixtures/partner-profile.json', import.meta.url), 'utf8')) as DefaultPartnerProfile
const at = '2026-01-01T00:00:00.000Z'

function loan(id: string, principal: number, history: Loan['history']): Loan {
  return {
    id, status: 'active', currency: 'USDT', principal, debt: principal, collateral: 1, ltv: 10, interestDue: 0, interestRatePercent: 12,
    originationFee: principal / 100, createdAt: at, updatedAt: at, history,
  }
}
const book = (loans: Loan[]): LoanBook => ({ wallet: { BTC: 0, USDT: 0 }, loans, applications: [], repayments: [], draftId: null })

describe('partner level below the table', () => {
  it('is the lowest level when the volume has not reached any minimum', () => {
    const levels: PartnerLevel[] = [
      { level: 'gold', min_volume_usd: 5000, reward_percent: 20 },
      { level: 'bronze', min_volume_usd: 1000, reward_percent: 5 },
    ]
    const view = viewPartner({ profile: null, defaults, levels, book: book([]), keySeed: 'seed' })
    expect(view.levels.current.level).toBe('bronze')
    expect(view.levels.next).toEqual({ level: 'bronze', min_volume_usd: 1000, remaining_usd: 1000 })
  })
})

describe('a reward for an issue with no fee entry after it', () => {
  it('accrues a fee of 0 rather than another entry\'s amount', () => {
    const levels: PartnerLevel[] = [{ level: 'base', min_volume_usd: 0, reward_percent: 10 }]
    const history: Loan['history'] = [
      { type: 'issued', at, amount: 1000, asset: 'USDT' },
      { type: 'collateral_added', at, amount: 0.5, asset: 'BTC' },
    ] as Loan['history']
    const view = viewPartner({ profile: null, defaults, levels, book: book([loan('loan_a', 1000, history)]), keySeed: 'seed' })
    expect(view.rewards.entries).toEqual([{ loan_id: 'loan_a', origination_fee: 0, reward_percent: 10, amount_usd: 0, at }])
    expect(view.levels.volume_usd).toBe(1000)
  })
})
