import { describe, expect, it } from 'vitest'
import { readDeliveryWait, readPortText, resolveReceiverFlags } from '../../src/cli/options.js'

describe('--receiver-port and --receiver-url', () => {
  it('take ports 0 to 65535 only', () => {
    expect([readPortText('0'), readPortText('65535'), readPortText('65536'), readPortText('80a')]).toEqual([0, 65535, undefined, undefined])
    expect(() => resolveReceiverFlags({ receiverPort: '65536' })).toThrow('invalid --receiver-port "65536": expected a port from 0 to 65535 (0 = any free port)')
  })

  it('keep a path prefix without its trailing slash, and refuse credentials, a query or a fragment', () => {
    expect(resolveReceiverFlags({ receiverUrl: 'https://abc.ngrok.app/base//' })).toEqual({ receiverUrl: 'https://abc.ngrok.app/base' })
    expect(() => resolveReceiverFlags({ receiverUrl: 'https://u:p@abc.ngrok.app/' })).toThrow('--receiver-url must not carry a user name or password')
    for (const url of ['https://abc.ngrok.app/?', 'https://abc.ngrok.app/#', 'https://abc.ngrok.app/?a=1']) {
      expect(() => resolveReceiverFlags({ receiverUrl: url }), url).toThrow('--receiver-url must not have a query or fragment')
    }
  })
})

describe('--wait', () => {
  it('takes up to 15 minutes', () => {
    expect(readDeliveryWait('15m')).toBe(900_000)
    expect(() => readDeliveryWait('16m')).toThrow('--wait: duration "16m" is out of range: from 1ms to 15m')
  })
})
