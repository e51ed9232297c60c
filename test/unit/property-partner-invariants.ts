/**
 * Invariants of the partner block computed from a loan book (README "Partner profile"): volume
 * is the principal issued, each issue and increase accrues fee × reward percent once, and an
 * accrued entry never changes afterwards.
 */

import levelsJson from '../../fixtures/partner-levels.json' with { type: 'json' }
import defaultsJson from '../../fixtures/partner-profile.json' with { type: 'json' }
import { viewPartner, type PartnerView } from '../../src/domain/partner.js'
import type { LoanBook } from '../../src/domain/types.js'
import { check, decimalsOf, near, roundedFrom } from './property-book-invariants.js'

/** The partner block of `book` with the fixture levels and default profile. */
export function viewFixturePartner(book: LoanBook): PartnerView {
  return viewPartner({ profile: null, defaults: defaultsJson, levels: levelsJson, book, keySeed: 'key_props' })
}

/** Checks `view` against `book`, and against the `previous` view when there is one. */
export function checkPartner(book: LoanBook, view: PartnerView, previous: PartnerView | null): void {
  const principal = book.loans.reduce((sum, loan) => sum + loan.principal, 0)
  check(near(view.levels.volume_usd, principal) && decimalsOf(view.levels.volume_usd) <= 2, `partner volume ${view.levels.volume_usd} is not the principal issued (${principal})`)
  const accruals = book.loans.flatMap((loan) => loan.history.filter((h) => h.type === 'issued' || h.type === 'loan_increased'))
  check(view.rewards.entries.length === accruals.length, `${view.rewards.entries.length} reward entries for ${accruals.length} issues and increases`)
  for (const entry of view.rewards.entries) {
    check(roundedFrom(entry.amount_usd, (entry.origination_fee * entry.reward_percent) / 100, 2), `reward ${entry.amount_usd} is not ${entry.reward_percent}% of fee ${entry.origination_fee}`)
  }
  const accrued = view.rewards.entries.reduce((sum, entry) => sum + entry.amount_usd, 0)
  check(near(view.rewards.accrued_usd, accrued) && decimalsOf(view.rewards.accrued_usd) <= 2, `accrued ${view.rewards.accrued_usd} is not the sum of the entries (${accrued})`)
  for (const deal of view.links[0]!.deals) {
    const volume = deal.loans.reduce((sum, loan) => sum + loan.amount, 0)
    check(near(deal.volume_usd, volume) && decimalsOf(deal.volume_usd) <= 2, `deal volume ${deal.volume_usd} is not ${volume}`)
  }
  if (previous) {
    const kept = view.rewards.entries.slice(0, previous.rewards.entries.length)
    check(JSON.stringify(kept) === JSON.stringify(previous.rewards.entries), 'an accrued reward entry changed')
  }
}
