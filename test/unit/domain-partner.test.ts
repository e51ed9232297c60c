import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { applyPartnerUpdate, viewPartner, type DefaultPartnerProfile, type PartnerLevel } from '../../src/domain/partner.js'
import type { Loan, LoanBook } from '../../src/domain/types.js'

const levels = JSON.parse(readFileSync(new URL('../../fixtures/partner-levels.json', import.meta.url), 'utf8')) as PartnerLevel[]
const defaults = JSON.parse(readFileSync(new URL('../../fixtures/partner-profile.json', import.meta.url), 'utf8')) as DefaultPartnerProfile

function loan(id: string, principal: number, createdAt: string, extra: Partial<Loan> = {}): Loan {
  return {
    id, status: 'active', currency: 'USDT', principal, debt: principal, collateral: 1, ltv: 10, interestDue: 0, interestRatePercent: 12,
    originationFee: principal / 100, createdAt, updatedAt: createdAt, history: [], ...extra,
  }
}

function book(loans: Loan[]): LoanBook {
  return { wallet: { BTC: 0, USDT: 0 }, loans, applications: [], repayments: [], draftId: null }
}

describe('partner profile updates', () => {
  it('needs a name on first create, keeps unsent fields and clears with null', () => {
    expect(() => applyPartnerUpdate(null, { email: 'a@b.example' }, '2026-01-01T00:00:00.000Z', 'seed')).toThrow(/name is required/)
    const { profile, created } = applyPartnerUpdate(null, { name: 'Acme', email: 'ops@acme.example' }, '2026-01-01T00:00:00.000Z', 'seed')
    expect(created).toBe(true)
    expect(profile).toMatchObject({ name: 'Acme', email: 'ops@acme.example', website: null, payout_address: null })
    expect(profile.id).toMatch(/^ptr_/)
    const updated = applyPartnerUpdate(profile, { website: 'https://acme.example', email: null }, '2026-01-02T00:00:00.000Z', 'seed')
    expect(updated.created).toBe(false)
    expect(updated.profile).toMatchObject({ name: 'Acme', email: null, website: 'https://acme.example', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z' })
    expect(updated.profile.referral_code).toBe(profile.referral_code)
    const renamed = applyPartnerUpdate(updated.profile, { name: 'Acme Ltd' }, '2026-01-03T00:00:00.000Z', 'seed')
    expect(renamed.profile).toMatchObject({ name: 'Acme Ltd', email: null, website: 'https://acme.example' })
  })

  it('keeps the referral code the default view showed once the profile is created', () => {
    const shown = viewPartner({ profile: null, defaults, levels, book: book([]), keySeed: 'seed' }).links[0]!.code
    const { profile } = applyPartnerUpdate(null, { name: 'Acme' }, '2026-01-01T00:00:00.000Z', 'seed')
    expect(profile.referral_code).toBe(shown)
  })
})

describe('partner view', () => {
  it('shows the fixture default profile, bronze level and no rewards for a new key', () => {
    const view = viewPartner({ profile: null, defaults, levels, book: book([]), keySeed: 'seed' })
    expect(view.profile).toMatchObject({ name: defaults.name })
    expect(view.profile).not.toHaveProperty('referral_base_url')
    expect(view.links).toHaveLength(1)
    expect(view.links[0]!.url).toBe(`${defaults.referral_base_url}${view.links[0]!.code}`)
    expect(view.levels.current.level).toBe('bronze')
    expect(view.levels.next).toEqual({ level: 'silver', min_volume_usd: 100000, remaining_usd: 100000 })
    expect(view.rewards).toEqual({ accrued_usd: 0, paid_usd: 0, entries: [] })
  })

  it('accrues fee × reward percent per loan, at the level reached before that loan', () => {
    const loans = [
      loan('loan_a', 20000, '2026-01-01T00:00:00.000Z'),
      loan('loan_b', 90000, '2026-01-02T00:00:00.000Z'),
      loan('loan_c', 10000, '2026-01-03T00:00:00.000Z', { status: 'closed' }),
    ]
    const view = viewPartner({ profile: null, defaults, levels, book: book(loans), keySeed: 'seed' })
    expect(view.rewards.entries.map((entry) => [entry.loan_id, entry.reward_percent, entry.amount_usd])).toEqual([
      ['loan_a', 10, 20], ['loan_b', 10, 90], ['loan_c', 15, 15],
    ])
    expect(view.rewards.accrued_usd).toBe(125)
    expect(view.levels.volume_usd).toBe(120000)
    expect(view.levels.current.level).toBe('silver')
    expect(view.levels.next).toMatchObject({ level: 'gold', remaining_usd: 380000 })
  })

  it('reaches a level at exactly its min_volume_usd', () => {
    const loans = [loan('loan_a', 60000, '2026-01-01T00:00:00.000Z'), loan('loan_b', 40000, '2026-01-02T00:00:00.000Z')]
    const view = viewPartner({ profile: null, defaults, levels, book: book(loans), keySeed: 'seed' })
    expect(view.levels.volume_usd).toBe(100000)
    expect(view.levels.current.level).toBe('silver')
    expect(view.levels.next).toEqual({ level: 'gold', min_volume_usd: 500000, remaining_usd: 400000 })
  })

  it('accrues each issue and increase once, at its own time: a later increase changes no earlier entry', () => {
    const issued = (at: string, amount: number) => [
      { type: 'issued', at, amount, asset: 'USDT' as const },
      { type: 'origination_fee', at, amount: amount / 100, asset: 'USDT' as const },
    ]
    const day = (n: number) => `2026-01-0${n}T00:00:00.000Z`
    const a = loan('loan_a', 90000, day(1), { history: issued(day(1), 90000) })
    const b = loan('loan_b', 20000, day(2), { history: issued(day(2), 20000) })
    const before = viewPartner({ profile: null, defaults, levels, book: book([a, b]), keySeed: 'seed' }).rewards
    // increase_loan on loan_a after loan_b: its fee accrues at the level reached by then (silver).
    const grown: Loan = {
      ...a, principal: 100000, originationFee: 1000,
      history: [...a.history, { type: 'loan_increased', at: day(3), amount: 10000, asset: 'USDT' }, { type: 'origination_fee', at: day(3), amount: 100, asset: 'USDT' }],
    }
    const view = viewPartner({ profile: null, defaults, levels, book: book([grown, b]), keySeed: 'seed' })
    expect(view.rewards.entries.slice(0, 2)).toEqual(before.entries)
    expect(view.rewards.entries.map((entry) => [entry.loan_id, entry.origination_fee, entry.reward_percent, entry.amount_usd, entry.at])).toEqual([
      ['loan_a', 900, 10, 90, day(1)], ['loan_b', 200, 10, 20, day(2)], ['loan_a', 100, 15, 15, day(3)],
    ])
    expect(view.rewards.accrued_usd).toBe(125)
    expect(view.levels.volume_usd).toBe(120000)
  })

  it('groups deals by external_client_id and client_reference', () => {
    const loans = [
      loan('loan_1', 1000, '2026-01-01T00:00:00.000Z', { external_client_id: 'c1' }),
      loan('loan_2', 2000, '2026-01-02T00:00:00.000Z', { external_client_id: 'c1' }),
      loan('loan_3', 3000, '2026-01-03T00:00:00.000Z', { external_client_id: 'c1', client_reference: 'r9' }),
      loan('loan_4', 4000, '2026-01-04T00:00:00.000Z'),
    ]
    const { deals } = viewPartner({ profile: null, defaults, levels, book: book(loans), keySeed: 'seed' }).links[0]!
    expect(deals.map((deal) => [deal.external_client_id, deal.client_reference, deal.loans.map((item) => item.loan_id), deal.volume_usd])).toEqual([
      ['c1', null, ['loan_1', 'loan_2'], 3000],
      ['c1', 'r9', ['loan_3'], 3000],
    ])
  })
})
