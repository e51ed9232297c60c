import { describe, expect, it } from 'vitest'
import { startWebhookInbox } from '../../src/scenarios/webhook-inbox.js'
import { installWallClock } from '../helpers/wall-clock.js'

describe('the scenario runner\'s webhook inbox', () => {
  it('gives up a wait_for_webhook after its timeout even when the wall clock is set back meanwhile', async () => {
    const inbox = await startWebhookInbox()
    const clock = installWallClock()
    try {
      const started = performance.now()
      const waiting = inbox.next('/hooks', 300)
      clock.jump(-3_600_000)
      // On the wall clock the deadline moved an hour away: the wait would have lasted that hour.
      const outcome = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 3000))])
      expect(outcome).toBeNull()
      expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    } finally {
      clock.restore()
      await inbox.close()
    }
  })

  it('hands over a delivery that arrives while a step waits for it', async () => {
    const inbox = await startWebhookInbox()
    try {
      const waiting = inbox.next('/hooks', 5000)
      const sent = await fetch(`${inbox.url}/hooks?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"evt_1"}' })
      expect(sent.status).toBe(200)
      const delivery = await waiting
      expect(delivery?.rawBody).toBe('{"id":"evt_1"}')
    } finally {
      await inbox.close()
    }
  })

  it('rejects a wait whose signal is already aborted with its reason, rather than waiting out its timeout', async () => {
    const inbox = await startWebhookInbox()
    try {
      const reason = new Error('draft.json changed')
      // A minute, far past the test's timeout: a wait that ignored the signal would end the test by it.
      await expect(inbox.next('/hooks', 60_000, AbortSignal.abort(reason))).rejects.toBe(reason)
    } finally {
      await inbox.close()
    }
  })
})
