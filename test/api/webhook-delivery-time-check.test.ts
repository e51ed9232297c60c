import { afterEach, describe, expect, it } from 'vitest'
import { sendWebhook } from '../../src/webhooks/sender.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let receiver: TestReceiver | undefined
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})

describe('the delivery-time address check', () => {
  it('refuses a name when any address it resolves to is forbidden, not only the first', async () => {
    receiver = await startReceiver('/webhooks', 0, { checkDeliveries: false })
    const url = receiver.url.replace('127.0.0.1', 'mixed.partner.test')
    // Both stay on loopback: 127.0.0.2 stands for the private address a rebinding name adds.
    const options = { isForbidden: (address: string) => address === '127.0.0.2', resolve: async () => ['127.0.0.1', '127.0.0.2'] }
    const outcome = await sendWebhook(url, '{}', {}, options)
    expect(outcome).toMatchObject({ statusCode: null, error: 'EFORBIDDEN: mixed.partner.test resolves to a forbidden address 127.0.0.2' })
    expect(receiver.received).toHaveLength(0)
  })
})
