import { describe, expect, it } from 'vitest'
import type { Loan, LoanBook } from '../../src/domain/types.js'
import { loadFixtures } from '../../src/server/fixtures.js'
import { viewPartner } from '../../src/server/routes/partner-routes.js'
import type { SandboxServices } from '../../src/server/services.js'
import type { SessionDoc } from '../../src/server/session-doc.js'

const services = { fixtures: loadFixtures() } as SandboxServices

function loan(id: string, principal: number, createdAt: string): Loan {
  return {
    id, status: 'active', currency: 'USDT', principal, debt: principal, collateral: 1, ltv: 10, interestDue: 0, interestRatePercent: 12,
    originationFee: principal / 100, createdAt, updatedAt: createdAt, history: [],
  }
}

function docWith(loans: Loan[], partner: SessionDoc['partner'] = null): SessionDoc {
  const book: LoanBook = { wallet: { BTC: 0, USDT: 0 }, loans, applications: [], repayments: [], draftId: null }
  return { book, partner } as SessionDoc
}

describe('the partner block of GET partner and GET state', () => {
  it('is built once per version of the key\'s book and profile, not at every request', () => {
    const doc = docWith([loan('loan_1', 20000, '2026-01-01T00:00:00.000Z')])
    const first = viewPartner(doc, services, 'key_a')
    // A client polling an unchanged state: the same block, not a rebuilt one.
    expect(viewPartner(doc, services, 'key_a')).toBe(first)
    expect(viewPartner({ ...doc }, services, 'key_a')).toBe(first)
    expect(first).toMatchObject({ rewards: { accrued_usd: 20 } })
  })

  it('is built again once the book, the profile or the key is another', () => {
    const doc = docWith([loan('loan_1', 20000, '2026-01-01T00:00:00.000Z')])
    const first = viewPartner(doc, services, 'key_a')
    const grown = docWith([...doc.book.loans, loan('loan_2', 5000, '2026-01-02T00:00:00.000Z')])
    expect(viewPartner(grown, services, 'key_a')).toMatchObject({ rewards: { accrued_usd: 25 } })
    const profile = { id: 'ptr_1', name: 'Acme', email: null, website: null, payout_address: null, referral_code: 'ref_acme', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }
    expect(viewPartner({ ...doc, partner: profile }, services, 'key_a')).toMatchObject({ profile: { name: 'Acme' } })
    // The same book seen through another key: that key's own links, not the block built for the first.
    const shared = docWith([loan('loan_1', 20000, '2026-01-01T00:00:00.000Z')])
    const forA = viewPartner(shared, services, 'key_a')
    const forB = viewPartner(shared, services, 'key_b')
    expect((forB.links as Array<{ code: string }>)[0]!.code).not.toBe((forA.links as Array<{ code: string }>)[0]!.code)
    // The same book served by a sandbox of other fixtures: that sandbox's defaults.
    const renamed = { fixtures: { ...services.fixtures, partnerProfile: { ...services.fixtures.partnerProfile, name: 'Other Partner' } } } as SandboxServices
    expect(viewPartner(shared, renamed, 'key_b')).toMatchObject({ profile: { name: 'Other Partner' } })
    const other = viewPartner(doc, services, 'key_b')
    expect(other).not.toBe(first)
    expect((other.links as Array<{ code: string }>)[0]!.code).not.toBe((first.links as Array<{ code: string }>)[0]!.code)
  })
})
