import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'

// A partner simulates market and policy moves by restarting serve with another --config. The
// terms a loan was issued on, or a draft was quoted on, are its own; only prices move.

async function send(sandbox: Sandbox, key: string, method: string, path: string, body?: object) {
  const answer = await sandbox.fetch(buildRequest('http://x', method, path, { body, idempotencyKey: method === 'POST' ? `idem-${Math.random()}` : undefined }, key))
  return { status: answer.status, body: await answer.json() }
}

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

async function restartWith(first: Sandbox, dataDir: string, config: object): Promise<Sandbox> {
  await first.close()
  return createSandbox({ storage: 'fs', dataDir, rateLimit: false, config })
}

describe('a restart with another config', () => {
  // 10,000 at the fixture's 12 % a year, one month a period: 100; the restart changes the rate or the period.
  it.each([
    ['rate', { borrow_rates: { fixed: 24 } }, { interestRatePercent: 12 }, { interestRatePercent: 24, interestDue: 200 }],
    ['interest period', { terms: { interest_payment_months: 3, principal_payment_months: 12 } }, { interestPaymentMonths: 1 }, { interestPaymentMonths: 3, interestDue: 300 }],
  ] as const)('keeps an issued loan\'s %s: its next period is charged as before the restart, and a new loan takes the new terms', async (_what, config, kept, next) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-terms-'))
    dirs.push(dataDir)
    const key = newKey()
    const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
    const created = await send(first, key, 'POST', '/api/sandbox/loans', { ...LOAN, loan_amount: 10_000 })
    const loan = created.body.activeLoans[0]
    expect(loan).toMatchObject({ interestRatePercent: 12, interestPaymentMonths: 1, interestDue: 100 })
    const second = await restartWith(first, dataDir, config)
    try {
      const paid = await send(second, key, 'POST', `/api/sandbox/loans/${loan.id}/action`, { action: 'repay_interest', amount: 100 })
      expect(paid.status).toBe(200)
      expect(paid.body.activeLoans[0]).toMatchObject({ id: loan.id, ...kept, interestDue: 100 })
      const issued = await send(second, key, 'POST', '/api/sandbox/loans', { ...LOAN, loan_amount: 10_000 })
      expect(issued.body.activeLoans.at(-1)).toMatchObject(next)
    } finally {
      await second.close()
    }
  })

  it('issues a draft on the terms its calculation quoted, at today\'s LTV', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-terms-'))
    dirs.push(dataDir)
    const key = newKey()
    const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
    const start = await send(first, key, 'POST', '/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20_000, loan_currency: 'USDT' })
    expect(start.body.draft.calculation).toMatchObject({ originationFee: 200, payoutAmount: 19_800, interestDue: 200, interestRatePercent: 12 })
    await send(first, key, 'POST', '/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 'tx-1', confirmations: 6 })
    await send(first, key, 'POST', '/api/sandbox/loans/flow', { action: 'run_kyt' })
    const walletBefore = (await send(first, key, 'GET', '/api/sandbox/state')).body.loans.wallet.USDT
    const second = await restartWith(first, dataDir, { rates: { btc_usd: 50_000 }, fees: { loan_origination_percent: 3 }, borrow_rates: { fixed: 24 }, terms: { interest_payment_months: 3, principal_payment_months: 12 } })
    try {
      const payout = await send(second, key, 'POST', '/api/sandbox/loans/flow', { action: 'complete_payout' })
      expect(payout.status).toBe(200)
      // The fee, payout, rate and period quoted stand; the LTV is at the new price (20,000 / 25,000).
      const issued = payout.body.activeLoans.at(-1)
      expect(issued).toMatchObject({ debt: 20_000, originationFee: 200, interestDue: 200, interestRatePercent: 12, interestPaymentMonths: 1, ltv: 80 })
      // Its next period too: 20,000 at 12 % for one month.
      const paid = await send(second, key, 'POST', `/api/sandbox/loans/${issued.id}/action`, { action: 'repay_interest', amount: 200 })
      expect(paid.body.activeLoans.at(-1)).toMatchObject({ interestDue: 200 })
      expect(payout.body.wallet.USDT).toBe(walletBefore + 19_800)
    } finally {
      await second.close()
    }
  })
})
