import { SandboxError } from '../errors/sandbox-error.js'
import type { PartnerProfileInput } from '../schemas/partner.js'
import { hashToHex } from './address-hash.js'
import { roundUsd } from './money.js'
import type { z } from 'zod'
import type { partnerViewSchema, savedPartnerProfileSchema } from '../schemas/responses/partner-view.js'
import type { Loan, LoanBook } from './types.js'

/** The partner block as the API answers it (inferred from its response schema). */
export type PartnerView = z.infer<typeof partnerViewSchema>

/** The sandbox partner profile a key has created (inferred from the schema its event is documented with). */
export type PartnerProfile = z.infer<typeof savedPartnerProfileSchema>

/** A row of the partner level table (fixtures/partner-levels.json). */
export interface PartnerLevel {
  level: string
  min_volume_usd: number
  reward_percent: number
}

/** The referral code of a key: deterministic, so links stay the same across restarts. */
export function deriveReferralCode(keySeed: string): string {
  return `ref_${hashToHex(`${keySeed}:referral`, 10)}`
}

/**
 * Creates or updates the profile: fields not sent keep their value, `null` clears an optional
 * one, and a first create needs a name.
 */
export function applyPartnerUpdate(current: PartnerProfile | null, input: PartnerProfileInput, now: string, keySeed: string): { profile: PartnerProfile; created: boolean } {
  if (!current && !input.name) {
    throw new SandboxError('INVALID_REQUEST', 'name is required when the partner profile is first created.', { field: 'name', issue: 'is required' })
  }
  const pick = (field: 'email' | 'website' | 'payout_address') => (input[field] === undefined ? current?.[field] ?? null : input[field] ?? null)
  const profile: PartnerProfile = {
    id: current?.id ?? `ptr_${hashToHex(`${keySeed}:partner`, 20)}`,
    name: input.name ?? current!.name,
    email: pick('email'),
    website: pick('website'),
    payout_address: pick('payout_address'),
    referral_code: current?.referral_code ?? deriveReferralCode(keySeed),
    created_at: current?.created_at ?? now,
    updated_at: now,
  }
  return { profile, created: !current }
}

function levelFor(levels: readonly PartnerLevel[], volume: number): PartnerLevel {
  const sorted = [...levels].sort((a, b) => a.min_volume_usd - b.min_volume_usd)
  return sorted.filter((row) => row.min_volume_usd <= volume).at(-1) ?? sorted[0]!
}

/** Issued loans in issue order; a loan's volume is its principal (increases included), USDT 1:1 USD. */
function issuedLoans(book: LoanBook): Loan[] {
  return [...book.loans].sort((a, b) => a.createdAt.localeCompare(b.createdAt))
}

/** A change that added principal and charged an origination fee: an issue or an increase. */
interface Accrual {
  loan_id: string
  principal: number
  fee: number
  at: string
}

/**
 * The fee-bearing changes of the loans, oldest first, from each loan's history: its issue and
 * each `increase_loan`, with the fee entry that follows it. A loan with no such history counts
 * as issued once with its principal and fee.
 */
function listAccruals(loans: readonly Loan[]): Accrual[] {
  const accruals = loans.flatMap((loan) => {
    const found: Accrual[] = []
    loan.history.forEach((entry, index) => {
      if (entry.type !== 'issued' && entry.type !== 'loan_increased') return
      const fee = loan.history[index + 1]?.type === 'origination_fee' ? loan.history[index + 1]!.amount ?? 0 : 0
      found.push({ loan_id: loan.id, principal: entry.amount ?? 0, fee, at: entry.at })
    })
    return found.length > 0 ? found : [{ loan_id: loan.id, principal: loan.principal, fee: loan.originationFee, at: loan.createdAt }]
  })
  // Stable: changes at the same instant keep their loan and history order.
  return accruals.sort((a, b) => a.at.localeCompare(b.at))
}

/** fixtures/partner-profile.json: the profile shown until the key creates its own. */
export interface DefaultPartnerProfile {
  name: string
  email: string | null
  website: string | null
  payout_address: string | null
  referral_base_url?: string
}

/** Inputs of viewPartner. */
export interface PartnerViewInput {
  profile: PartnerProfile | null
  defaults: DefaultPartnerProfile
  levels: readonly PartnerLevel[]
  book: LoanBook
  keySeed: string
}

/**
 * The partner block of GET /partner and GET state: profile, referral links with deals grouped by
 * `external_client_id` / `client_reference`, levels with the current one, and rewards. Each
 * issue and each increase accrues its `origination fee × reward_percent / 100`, at the level
 * the volume had reached before it, so an entry never changes once accrued.
 */
export function viewPartner(input: PartnerViewInput): PartnerView {
  const { referral_base_url: base, ...defaults } = input.defaults
  const referralCode = input.profile?.referral_code ?? deriveReferralCode(input.keySeed)
  const profile = input.profile ?? { ...defaults, referral_code: referralCode }
  const loans = issuedLoans(input.book)

  let volume = 0
  const entries = listAccruals(loans).map((accrual) => {
    const level = levelFor(input.levels, volume)
    volume = roundUsd(volume + accrual.principal)
    return { loan_id: accrual.loan_id, origination_fee: accrual.fee, reward_percent: level.reward_percent, amount_usd: roundUsd(accrual.fee * level.reward_percent / 100), at: accrual.at }
  })
  const current = levelFor(input.levels, volume)
  const next = [...input.levels].sort((a, b) => a.min_volume_usd - b.min_volume_usd).find((row) => row.min_volume_usd > volume)

  const deals = new Map<string, PartnerView['links'][number]['deals'][number]>()
  for (const loan of loans.filter((item) => item.external_client_id || item.client_reference)) {
    const group = JSON.stringify([loan.external_client_id ?? null, loan.client_reference ?? null])
    const deal = deals.get(group) ?? { external_client_id: loan.external_client_id ?? null, client_reference: loan.client_reference ?? null, loans: [], volume_usd: 0 }
    deal.loans.push({ loan_id: loan.id, amount: loan.principal, currency: loan.currency, status: loan.status, created_at: loan.createdAt })
    deal.volume_usd = roundUsd(deal.volume_usd + loan.principal)
    deals.set(group, deal)
  }

  return {
    profile,
    links: [{ code: referralCode, url: `${String(base ?? 'https://sandbox.example.com/r/')}${referralCode}`, deals: [...deals.values()] }],
    levels: {
      table: [...input.levels],
      current,
      volume_usd: volume,
      next: next ? { level: next.level, min_volume_usd: next.min_volume_usd, remaining_usd: roundUsd(next.min_volume_usd - volume) } : null,
    },
    rewards: {
      accrued_usd: roundUsd(entries.reduce((sum, entry) => sum + entry.amount_usd, 0)),
      paid_usd: 0,
      entries,
    },
  }
}
