import { cents, expectedLtv, sats, type ModelConfig } from './money-checks.js'

/**
 * What one accepted loan request must have changed, judged from the state before it, the
 * request and the config, in integer cents and satoshis: the figures the server computes in
 * floats and rounds (fees, interest, LTV limits), recomputed exactly.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The config figures the transition checks need besides ModelConfig's. */
export interface FullModelConfig extends ModelConfig {
  feePercent: number
  fixedPercent: number
  interestMonths: number
}

/** Rounds num/den (both positive bigints) half up. */
function roundDiv(num: bigint, den: bigint): number {
  return Number((num * 2n / den + 1n) / 2n)
}

/** Origination fee in cents of an amount in cents (fee percent with at most 4 decimals). */
export function feeCents(amountCents: number, config: FullModelConfig): number {
  return roundDiv(BigInt(amountCents) * BigInt(Math.round(config.feePercent * 1e4)), 100n * 10_000n)
}

/** One period's interest in cents on a debt in cents. */
export function interestCents(debtCents: number, config: FullModelConfig): number {
  if (debtCents === 0) return 0
  return roundDiv(BigInt(debtCents) * BigInt(Math.round(config.fixedPercent * 1e4)) * BigInt(config.interestMonths), 1200n * 10_000n)
}

/** True when debt/collateral is above the max LTV, exactly. */
export function aboveMaxLtv(debtCents: number, collateralSats: number, config: ModelConfig): boolean {
  // debt/(collateral*rate)*100 > max  <=>  debtCents * 1e8 > max * sats * rate (all scaled by 1e3)
  return BigInt(debtCents) * 10n ** 6n * 10n ** 6n > BigInt(Math.round(config.maxLtv * 1e3)) * BigInt(collateralSats) * BigInt(Math.round(config.btcUsd * 1e3))
}

const loansOf = (state: any): any[] => [...state.activeLoans, ...state.loanHistory]

/** Problems of an accepted request: `before` and `after` are loan states, `body` what was sent. */
export function checkTransition(path: string, body: any, before: any, after: any, config: FullModelConfig): string[] {
  const problems: string[] = []
  const dUsdt = cents(after.wallet.USDT) - cents(before.wallet.USDT)
  const dBtc = sats(after.wallet.BTC) - sats(before.wallet.BTC)
  const newLoans = loansOf(after).filter((loan) => !loansOf(before).some((old) => old.id === loan.id))
  // A loan is issued on the terms quoted: a direct one on today's config, a draft on the
  // calculation it was given at its start (checked then), whatever a restart changed since.
  const issuedCheck = (loan: any, quote?: any) => {
    const amount = cents(loan.principal)
    const fee = quote ? cents(quote.originationFee) : feeCents(amount, config)
    const interest = quote ? cents(quote.interestDue) : interestCents(amount, config)
    const rate = quote ? quote.interestRatePercent : config.fixedPercent
    const months = quote ? quote.interestPaymentMonths : config.interestMonths
    if (loan.interestPaymentMonths !== months) problems.push(`new loan ${loan.id}: interestPaymentMonths ${loan.interestPaymentMonths}, expected ${months}`)
    if (cents(loan.originationFee) !== fee) problems.push(`new loan ${loan.id}: fee ${loan.originationFee}, expected ${fee / 100}`)
    if (cents(loan.interestDue) !== interest) problems.push(`new loan ${loan.id}: interestDue ${loan.interestDue}, expected ${interest / 100}`)
    if (loan.interestRatePercent !== rate) problems.push(`new loan ${loan.id}: interestRatePercent ${loan.interestRatePercent}, expected ${rate}`)
    if (!quote && aboveMaxLtv(amount, sats(loan.collateral), config)) problems.push(`new loan ${loan.id} issued above max LTV (${loan.ltv}%)`)
    if (dUsdt !== amount - fee) problems.push(`issuing ${loan.id} moved USDT by ${dUsdt / 100}, expected ${(amount - fee) / 100}`)
  }
  if (path === '/api/sandbox/loans') {
    if (newLoans.length !== 1) return [`create loan made ${newLoans.length} loans`]
    issuedCheck(newLoans[0])
    if (dBtc !== -sats(newLoans[0].collateral)) problems.push(`create loan moved BTC by ${dBtc / 1e8}`)
    return problems
  }
  if (path === '/api/sandbox/loans/flow') {
    if (body.action === 'complete_payout') {
      if (newLoans.length !== 1) return [`complete_payout made ${newLoans.length} loans`]
      issuedCheck(newLoans[0], before.draft.calculation)
    } else if (newLoans.length) problems.push(`${body.action} made a loan`)
    if (body.action === 'start_collateral_transfer') checkQuote(after.draft, config, problems)
    if (body.action === 'confirm_btc' && dBtc !== -sats(before.draft.collateral_btc)) problems.push(`confirm_btc moved BTC by ${dBtc / 1e8}, draft holds ${before.draft.collateral_btc}`)
    if (body.action !== 'confirm_btc' && dBtc !== 0) problems.push(`${body.action} moved BTC by ${dBtc / 1e8}`)
    return problems
  }
  const match = /^\/api\/sandbox\/loans\/([^/]+)\/(action|repayment-flow)$/.exec(path)
  if (!match) return problems
  const id = decodeURIComponent(match[1]!)
  const old = loansOf(before).find((loan) => loan.id === id)
  const now = loansOf(after).find((loan) => loan.id === id)
  if (!old || !now) return [`accepted a change of loan ${id}, which ${old ? 'vanished' : 'did not exist'}`]
  if (old.status !== 'active') problems.push(`accepted a change of ${old.status} loan ${id}`)
  if (newLoans.length) problems.push(`a loan change made a new loan`)
  if (match[2] === 'action') checkDirectAction(body, old, now, dUsdt, dBtc, config, problems)
  return problems
}

/** A new draft's calculation: the terms today's config gives, within its limits. */
function checkQuote(draft: any, config: FullModelConfig, problems: string[]): void {
  const amount = cents(draft.loan_amount)
  const quote = draft.calculation
  const want = { originationFee: feeCents(amount, config), interestDue: interestCents(amount, config), payoutAmount: amount - feeCents(amount, config) }
  for (const [field, value] of Object.entries(want)) {
    if (cents(quote[field]) !== value) problems.push(`draft ${draft.id}: calculation.${field} ${quote[field]}, expected ${value / 100}`)
  }
  if (quote.interestPaymentMonths !== config.interestMonths) problems.push(`draft ${draft.id}: calculation.interestPaymentMonths ${quote.interestPaymentMonths}, expected ${config.interestMonths}`)
  if (quote.interestRatePercent !== config.fixedPercent) problems.push(`draft ${draft.id}: calculation.interestRatePercent ${quote.interestRatePercent}, expected ${config.fixedPercent}`)
  if (aboveMaxLtv(amount, sats(draft.collateral_btc), config)) problems.push(`draft ${draft.id} accepted above max LTV`)
}

function checkDirectAction(body: any, old: any, now: any, dUsdt: number, dBtc: number, config: FullModelConfig, problems: string[]): void {
  const where = `${body.action} ${body.amount} on ${old.id}`
  const usd = cents(body.amount)
  const btc = sats(body.amount)
  const expect = (what: string, got: number, want: number) => {
    if (got !== want) problems.push(`${where}: ${what} ${got}, expected ${want}`)
  }
  switch (body.action) {
    case 'repay_interest': {
      const left = cents(old.interestDue) - usd
      // The next period at the loan's own rate and period, which a restart with another config leaves as they were.
      const own = { ...config, fixedPercent: old.interestRatePercent, interestMonths: old.interestPaymentMonths }
      expect('interestDue cents', cents(now.interestDue), left > 0 ? left : interestCents(cents(old.debt), own))
      expect('USDT moved', dUsdt, -usd)
      break
    }
    case 'repay_principal':
      if (usd < cents(old.debt)) {
        expect('debt cents', cents(now.debt), cents(old.debt) - usd)
        expect('USDT moved', dUsdt, -usd)
      } else {
        expect('USDT moved', dUsdt, -(usd + cents(old.interestDue)))
        expect('BTC moved', dBtc, sats(old.collateral))
        if (now.status !== 'closed') problems.push(`${where}: repaying the whole debt left the loan ${now.status}`)
      }
      break
    case 'add_collateral':
      expect('collateral sats', sats(now.collateral), sats(old.collateral) + btc)
      expect('BTC moved', dBtc, -btc)
      break
    case 'remove_collateral':
      expect('collateral sats', sats(now.collateral), sats(old.collateral) - btc)
      expect('BTC moved', dBtc, btc)
      if (aboveMaxLtv(cents(now.debt), sats(now.collateral), config)) problems.push(`${where}: accepted above max LTV`)
      break
    case 'increase_loan':
      expect('debt cents', cents(now.debt), cents(old.debt) + usd)
      expect('USDT moved', dUsdt, usd - feeCents(usd, config))
      if (aboveMaxLtv(cents(now.debt), sats(now.collateral), config)) problems.push(`${where}: accepted above max LTV`)
      break
  }
  if (now.status === 'active' && now.ltv !== expectedLtv(cents(now.debt), sats(now.collateral), config.btcUsd)) problems.push(`${where}: ltv ${now.ltv}`)
}
