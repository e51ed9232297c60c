import { describe, expect, it } from 'vitest'
import { destinationOf } from '../../src/webhooks/send-destination.js'

describe('where a webhook URL without a port is sent', () => {
  it('to 443 for https and 80 for http, and to the port written otherwise', () => {
    expect(destinationOf(new URL('https://hooks.partner.example/x'), {}).port).toBe(443)
    expect(destinationOf(new URL('http://localhost/x'), {}).port).toBe(80)
    expect(destinationOf(new URL('https://hooks.partner.example:8443/x'), {}).port).toBe(8443)
    expect(destinationOf(new URL('http://[::1]:3000/x'), {})).toMatchObject({ host: '::1', port: 3000, https: false })
  })
})
