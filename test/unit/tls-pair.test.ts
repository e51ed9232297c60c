import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { checkTlsPair } from '../../src/server/tls-pair.js'

// The fixture certificate is RSA; a key of another type is one OpenSSL files in another slot
// without comparing it to the certificate, so that every handshake failed after a clean start.
const CERT = readFileSync(new URL('../fixtures/tls/cert.pem', import.meta.url), 'utf8')
const KEY = readFileSync(new URL('../fixtures/tls/key.pem', import.meta.url), 'utf8')
const EC_KEY = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'sec1', format: 'pem' }) as string

describe('checkTlsPair', () => {
  it('refuses a key of another type than the certificate\'s, as any key of another certificate', () => {
    expect(() => checkTlsPair({ cert: CERT, key: EC_KEY })).toThrow('the private key does not belong to the certificate')
  })

  it('still accepts the certificate with its own key, and a chain whose first certificate is the key\'s', () => {
    expect(checkTlsPair({ cert: CERT, key: KEY }).cert).toContain('BEGIN CERTIFICATE')
    expect(() => checkTlsPair({ cert: `${CERT}${CERT}`, key: KEY })).not.toThrow()
  })
})
