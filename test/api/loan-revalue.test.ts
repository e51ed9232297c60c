import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { createSandboxStorage } from '../../src/storage/create-storage.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'
import { startReceiver } from '../helpers/receiver.js'

async function send(sandbox: Sandbox, key: string, method: string, path: string, body?: object, idempotencyKey?: string) {
  const answer = await sandbox.fetch(buildRequest('http://x', method, path, { body, idempotencyKey }, key))
  return { status: answer.status, body: await answer.json() }
}

describe('a restart with another BTC price', () => {
  it('shows active loans at the new price and keeps closed ones as they closed', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-revalue-'))
    try {
      const key = newKey()
      const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      const closed = await send(first, key, 'POST', '/api/sandbox/loans', LOAN, 'closed')
      const closedId = closed.body.activeLoans[0].id
      await send(first, key, 'POST', `/api/sandbox/loans/${closedId}/action`, { action: 'repay_principal', amount: LOAN.loan_amount }, 'close')
      const open = await send(first, key, 'POST', '/api/sandbox/loans', LOAN, 'open')
      // 20,000 USDT against 0.5 BTC at the fixture's 95,000 USD.
      expect(open.body.activeLoans[0].ltv).toBe(42.11)
      await first.close()

      const second = await createSandbox({ storage: 'fs', dataDir, rateLimit: false, config: { rates: { btc_usd: 50_000 } } })
      try {
        const state = await send(second, key, 'GET', '/api/sandbox/loans')
        expect(state.body.activeLoans).toMatchObject([{ id: open.body.activeLoans[0].id, ltv: 80 }])
        expect(state.body.loanHistory.find((loan: { id: string }) => loan.id === closedId).ltv).toBe(0)
        // The replay of the loan's creation is the answer given then, at the old price.
        const replay = await send(second, key, 'POST', '/api/sandbox/loans', LOAN, 'open')
        expect(replay.body.idempotency_replayed).toBe(true)
        expect(replay.body.activeLoans[0].ltv).toBe(42.11)
        // Limits are judged at the new price too: 80% is above the fixture's maximum.
        const remove = await send(second, key, 'POST', `/api/sandbox/loans/${open.body.activeLoans[0].id}/action`, { action: 'remove_collateral', amount: 0.01 }, 'remove')
        expect(remove.status).toBe(409)
        expect(remove.body.details.reason).toBe('LTV_LIMIT')
        // Already above the maximum: nothing can be removed or borrowed, shown as 0, not a negative figure.
        expect(remove.body.details.max_removable_btc).toBe(0)
        const increase = await send(second, key, 'POST', `/api/sandbox/loans/${open.body.activeLoans[0].id}/action`, { action: 'increase_loan', amount: 100 }, 'increase')
        expect(increase.status).toBe(409)
        expect(increase.body.details).toMatchObject({ reason: 'LTV_LIMIT', max_increase: 0 })
      } finally {
        await second.close()
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('shows the new price to a request that arrives while the resumed webhook worker reads the session', async () => {
    // A delivery waiting for its retry makes the restarted server's webhook worker read the
    // session at start; a GET sent a few microtasks later used to get the document as stored,
    // at the old price, and keep it so for every request after. Each tick offset is tried.
    const receiver = await startReceiver()
    receiver.respond = () => 500
    const memory = await createSandboxStorage({ kind: 'memory' })
    // A restart on one memory storage: the closed server must not dispose what the next reads.
    const start = (btcUsd: number) => createSandbox({
      storage: { ...memory, dispose: async () => {} },
      rateLimit: false,
      logError: () => {},
      config: { rates: { btc_usd: btcUsd } },
      webhookForwardTo: receiver.url,
      webhookRetrySchedule: [60_000],
    })
    const key = newKey()
    try {
      const first = await start(95_000)
      await send(first, key, 'POST', '/api/sandbox/loans', LOAN, 'loan')
      await receiver.waitFor(1)
      await first.close()
      const seen: number[] = []
      for (let ticks = 0; ticks < 8; ticks++) {
        // 20,000 USDT against 0.5 BTC: 80% at 50,000 USD, 42.11% at 95,000.
        const price = ticks % 2 === 0 ? 50_000 : 95_000
        const sandbox = await start(price)
        for (let i = 0; i < ticks; i++) await null
        seen.push((await send(sandbox, key, 'GET', '/api/sandbox/loans')).body.activeLoans[0].ltv)
        await sandbox.close()
      }
      expect(seen).toEqual([80, 42.11, 80, 42.11, 80, 42.11, 80, 42.11])
    } finally {
      await receiver.close()
    }
  })
})
