import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { verifyReceiver } from '../../src/webhook-tools/verify-receiver.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

const SECRET = 'whsec_verify_receiver_fake_clock'
const SLOW_ANSWER_S = 250

let receiver: TestReceiver | undefined
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})

describe('verifyReceiver', () => {
  it('signs each case when it is sent: a correct receiver answering slowly passes the whole battery', async () => {
    // One clock for sender and receiver, and every answer "takes" 250 s on it: over 25 cases that
    // is over 100 minutes, far past the 300 s tolerance, in milliseconds of real time.
    // Starts at the real time, so a battery signed by the real clock at build time (the old way) is
    // fresh for the first case and then goes stale on this clock: the failure is staleness alone.
    let clockMs = Date.now()
    const arrivals: number[] = []
    // The battery sends broken deliveries on purpose (no signature, a stale timestamp, ...).
    receiver = await startReceiver('/webhooks', 0, { checkDeliveries: false })
    receiver.respond = ({ body, headers }) => {
      const now = Math.floor(clockMs / 1000)
      arrivals.push(now)
      clockMs += SLOW_ANSWER_S * 1000
      try {
        verifyWebhook({ secret: SECRET, body, headers, now })
        return 200
      } catch {
        return 400
      }
    }
    const report = await verifyReceiver({ url: receiver.url, secret: SECRET, now: () => clockMs })
    expect(report.cases.filter((result) => !result.ok)).toEqual([])
    expect(report).toMatchObject({ passed: 25, failed: 0 })
    // Stale and future are still exactly 600 s off the receiver's clock when they arrive.
    const stamps = receiver.received.map((entry, index) => Number(entry.headers['x-service-webhook-timestamp']) - arrivals[index]!)
    const at = (name: string) => stamps[report.cases.findIndex((result) => result.name === name)]
    expect([at('signed sandbox.loan.issued'), at('stale timestamp'), at('future timestamp'), at('redelivery of an accepted event')]).toEqual([0, -600, 600, 1])
  })
  it('refuses a secret that is not set, or a URL that is none, before sending anything', async () => {
    // An unset process.env secret crashed in node:crypto ("The \"key\" argument ..."), and an empty
    // one ran the battery and blamed the receiver with 13 failed cases.
    receiver = await startReceiver('/webhooks', 0, { checkDeliveries: false })
    for (const secret of [undefined, '']) {
      await expect(verifyReceiver({ url: receiver.url, secret: secret as string })).rejects.toThrow(new TypeError('verifyReceiver needs the signing secret the receiver verifies with (whsec_...), not ' + (secret === undefined ? 'undefined' : '""')))
    }
    await expect(verifyReceiver({ url: '127.0.0.1:3000/webhooks', secret: SECRET })).rejects.toThrow(new TypeError('receiver URL must be an http(s) URL, got "127.0.0.1:3000/webhooks"'))
    expect(receiver.received).toEqual([])
  })
})
