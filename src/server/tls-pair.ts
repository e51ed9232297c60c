import { X509Certificate, createPrivateKey } from 'node:crypto'
import { createSecureContext } from 'node:tls'
import { SetupError } from '../errors/setup-error.js'
import { isBytes } from '../text/is-bytes.js'

/** A certificate (with its chain, if any) and its private key, as PEM text, to serve https with. */
export interface TlsPair {
  cert: string
  key: string
}

/** A pair as a library user may give it: text, or the Buffers `readFileSync` gives without an encoding. */
export interface TlsPairInput {
  cert: string | Uint8Array
  key: string | Uint8Array
}

/** PAIR as PEM text; anything but text or bytes is a TypeError naming the field. */
export function readPemPair(pair: TlsPairInput): TlsPair {
  const read = (name: 'cert' | 'key'): string => {
    const value: unknown = pair[name]
    if (typeof value === 'string') return value
    if (isBytes(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
    throw new TypeError(`tls.${name}: expected the PEM text (a string, or a Buffer as readFileSync gives), not ${value === null ? 'null' : typeof value === 'object' ? 'an object' : typeof value}`)
  }
  return { cert: read('cert'), key: read('key') }
}

/** What OpenSSL's refusal of a pair means, in words a user can act on. */
function describePairError(error: Error): string {
  const text = error.message
  if (/key values mismatch/i.test(text)) return 'the private key does not belong to the certificate'
  if (/bad decrypt|bad password|interrupted or cancelled|passphrase/i.test(text)) return 'the private key is encrypted; give it without a passphrase (openssl pkey -in key.pem -out plain.pem)'
  return `they cannot serve TLS (${text})`
}

/**
 * Checks that CERT and KEY make a TLS server, before anything listens: OpenSSL would otherwise
 * refuse them at the first connection, or listhen read a text that is not PEM as a file path.
 * Returns the pair with any text before the PEM blocks (a byte order mark, blank lines) dropped.
 */
export function checkTlsPair(pair: TlsPair): TlsPair {
  const start = (text: string) => text.indexOf('-----BEGIN ')
  const holdsCertificate = (text: string) => /-----BEGIN [A-Z0-9 ]*CERTIFICATE-----/.test(text)
  const holdsKey = (text: string) => /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)
  if (!holdsCertificate(pair.cert) && holdsKey(pair.cert) && holdsCertificate(pair.key) && !holdsKey(pair.key)) {
    throw new SetupError('the certificate and the private key are swapped: the certificate\'s file holds a private key, and the key\'s a certificate')
  }
  if (!holdsCertificate(pair.cert)) throw new SetupError('the certificate holds no PEM certificate (-----BEGIN CERTIFICATE-----)')
  if (!holdsKey(pair.key)) throw new SetupError('the private key holds no PEM private key (-----BEGIN PRIVATE KEY-----)')
  const checked = { cert: pair.cert.slice(start(pair.cert)), key: pair.key.slice(start(pair.key)) }
  try {
    createSecureContext(checked)
  } catch (error) {
    throw new SetupError(findKeysCertificate(checked) ?? describePairError(error as Error), { cause: error })
  }
  if (!holdsCertificatesKey(checked)) throw new SetupError(findKeysCertificate(checked) ?? 'the private key does not belong to the certificate')
  return checked
}

/**
 * For a key that is not the first certificate's: where in the file its certificate is. OpenSSL
 * serves the first certificate and takes the rest as its chain, so a chain saved CA first reads
 * as a key of another certificate, which it is not.
 */
function findKeysCertificate(pair: TlsPair): string | undefined {
  const certificates = pair.cert.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []
  const index = certificates.findIndex((cert, i) => i > 0 && canServe({ cert, key: pair.key }))
  if (index === -1) return undefined
  return `the private key belongs to certificate ${index + 1} of ${certificates.length} in the certificate's file: the server's own certificate must come first, then the certificates of its chain`
}

function canServe(pair: TlsPair): boolean {
  try {
    createSecureContext(pair)
  } catch {
    return false
  }
  return holdsCertificatesKey(pair)
}

/**
 * Whether the key is the first certificate's. OpenSSL compares a key only with a certificate of
 * its own type: an EC key given with an RSA certificate passed createSecureContext, and then
 * every handshake failed.
 */
function holdsCertificatesKey(pair: TlsPair): boolean {
  try {
    return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key))
  } catch {
    // Text OpenSSL took but node's parsers do not: createSecureContext is the check then.
    return true
  }
}
