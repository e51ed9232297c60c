import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { computeSignature, generateWebhookSecret, previewSecret, signWebhook, verifyWebhook, WebhookVerificationError } from '../../src/webhooks/signature.js'

interface Vector { name: string; secret: string; timestamp: number; body: string; signature: string }
const { vectors } = JSON.parse(readFileSync(new URL('../../fixtures/webhook-signature-vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] }

function headersFor(vector: Vector, signature = `v1=${vector.signature}`): Record<string, string> {
  return {
    'x-service-webhook-id': 'evt_1',
    'x-service-webhook-event': 'sandbox.webhook.test',
    'x-service-webhook-timestamp': String(vector.timestamp),
    'x-service-webhook-signature': signature,
  }
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as WebhookVerificationError).code
  }
}

describe('webhook signatures', () => {
  it.each(vectors.map((vector) => [vector.name, vector] as const))('matches the fixed vector: %s', (_name, vector) => {
    expect(computeSignature(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature)
    const signed = signWebhook({ secret: vector.secret, body: vector.body, timestamp: vector.timestamp, eventId: 'evt_1', eventType: 'sandbox.webhook.test' })
    expect(signed.headers['x-service-webhook-signature']).toBe(`v1=${vector.signature}`)
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector), now: vector.timestamp })).toEqual({
      eventId: 'evt_1', eventType: 'sandbox.webhook.test', timestamp: vector.timestamp,
    })
  })

  it('verifies the body\'s bytes as well as its text: a Buffer, a Uint8Array or an ArrayBuffer', () => {
    for (const vector of vectors) {
      const bytes = Buffer.from(vector.body, 'utf8')
      for (const body of [bytes, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)]) {
        expect(verifyWebhook({ secret: vector.secret, body, headers: headersFor(vector), now: vector.timestamp }).eventId, vector.name).toBe('evt_1')
      }
      expect(computeSignature(vector.secret, vector.timestamp, bytes)).toBe(vector.signature)
    }
  })

  it('signs bytes exactly as they are, not as text decoded and encoded again', () => {
    // Not UTF-8: decoded to text, the lone 0xff would become U+FFFD (three other bytes).
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')])
    const expected = createHmac('sha256', 'whsec_bytes_secret').update(Buffer.concat([Buffer.from('1700000000.'), bytes])).digest('hex')
    expect(computeSignature('whsec_bytes_secret', 1700000000, bytes)).toBe(expected)
    expect(computeSignature('whsec_bytes_secret', 1700000000, bytes.toString('utf8'))).not.toBe(expected)
  })

  it('refuses a body that is not the raw one with a TypeError saying what to pass (a parsed object, undefined)', () => {
    const vector = vectors[0]!
    const verify = (body: unknown) => () => verifyWebhook({ secret: vector.secret, body: body as string, headers: headersFor(vector), now: vector.timestamp })
    expect(verify(JSON.parse(vector.body))).toThrow(new TypeError('the webhook body must be the raw request body, a string or a Buffer, before any JSON parsing; it is an object: a JSON parser such as express.json() ran first; take the raw body instead'))
    expect(verify(undefined)).toThrow(/it is undefined \(does the framework keep the raw body\? With express, express\.raw\(\{ type: 'application\/json' \}\) on this route\)$/)
    expect(verify(42)).toThrow(/it is a number$/)
    // What express 4 leaves when no body parser took the request (express.raw() without a type
    // takes application/octet-stream only): no JSON parser ran, so saying one did misled.
    expect(verify({})).toThrow(/it is an empty object: no body parser read this request \(express 4 leaves \{\} then\); express\.raw\(\) takes only application\/octet-stream unless told, and deliveries are application\/json: express\.raw\(\{ type: 'application\/json' \}\) on this route$/)
  })

  it('accepts a signature made with any of several secrets, for a rotation, and refuses an empty list', () => {
    const vector = vectors[0]!
    const now = vector.timestamp
    const other = 'whsec_the_other_secret_of_a_rotation'
    expect(verifyWebhook({ secret: [other, vector.secret], body: vector.body, headers: headersFor(vector), now }).eventId).toBe('evt_1')
    expect(verifyWebhook({ secret: [vector.secret, other], body: vector.body, headers: headersFor(vector), now }).eventId).toBe('evt_1')
    expect(() => verifyWebhook({ secret: [other, 'whsec_a_third_one'], body: vector.body, headers: headersFor(vector), now }))
      .toThrow('signature does not match the body and timestamp for any of the 2 secrets')
    expect(() => verifyWebhook({ secret: [], body: vector.body, headers: headersFor(vector), now })).toThrow(TypeError)
    expect(() => verifyWebhook({ secret: '', body: vector.body, headers: headersFor(vector), now })).toThrow(TypeError)
  })

  it('covers the exact bytes: one changed byte, another secret or another timestamp fails', () => {
    const vector = vectors[0]!
    const now = vector.timestamp
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body.replace('evt_1', 'evt_2'), headers: headersFor(vector), now }))).toBe('signature_mismatch')
    expect(codeOf(() => verifyWebhook({ secret: `${vector.secret}x`, body: vector.body, headers: headersFor(vector), now }))).toBe('signature_mismatch')
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: { ...headersFor(vector), 'x-service-webhook-timestamp': String(now + 1) }, now }))).toBe('signature_mismatch')
  })

  it('names every kind of failure', () => {
    const vector = vectors[0]!
    const now = vector.timestamp
    const { 'x-service-webhook-signature': _dropped, ...unsigned } = headersFor(vector)
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: unsigned, now }))).toBe('missing_header')
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector, vector.signature), now }))).toBe('malformed_signature')
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector, 'v1=XYZ'), now }))).toBe('malformed_signature')
    expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: { ...headersFor(vector), 'x-service-webhook-timestamp': 'yesterday' }, now }))).toBe('malformed_timestamp')
  })

  it('refuses a delivery lacking any of the four headers, or sending one empty', () => {
    const vector = vectors[0]!
    for (const name of Object.keys(headersFor(vector))) {
      const { [name]: _dropped, ...without } = headersFor(vector)
      expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: without, now: vector.timestamp })), name).toBe('missing_header')
      expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: { ...headersFor(vector), [name]: '' }, now: vector.timestamp })), name).toBe('missing_header')
    }
  })

  it('takes unix seconds as decimal digits only, and signs the header text exactly as received', () => {
    const vector = vectors[0]!
    const withStamp = (stamp: string) => ({ ...headersFor(vector, `v1=${computeSignature(vector.secret, stamp, vector.body)}`), 'x-service-webhook-timestamp': stamp })
    // Correctly signed over these texts, so only the format check can refuse them.
    for (const stamp of [`${vector.timestamp}000`, `${vector.timestamp}.0`, ` ${vector.timestamp}`, `${vector.timestamp}e0`]) {
      expect(codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: withStamp(stamp), now: vector.timestamp })), stamp).toBe('malformed_timestamp')
    }
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers: withStamp(`0${vector.timestamp}`), now: vector.timestamp }).timestamp).toBe(vector.timestamp)
  })

  it('takes only v1= values of 64 lowercase hex digits', () => {
    const vector = vectors[0]!
    const verify = (signature: string) => codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector, signature), now: vector.timestamp }))
    for (const signature of [`v0=${vector.signature}`, `V1=${vector.signature}`, `v1=${vector.signature.toUpperCase()}`, `v1=${vector.signature.slice(0, 40)}`, `v1=${vector.signature}00`]) {
      expect(verify(signature), signature).toBe('malformed_signature')
    }
    expect(verify(`v1=${'0'.repeat(64)}  v1=${vector.signature}`)).toBeUndefined()
  })

  it('reads the first value of a repeated header given as an array', () => {
    const vector = vectors[0]!
    const headers = { ...headersFor(vector), 'x-service-webhook-signature': [`v1=${vector.signature}`, 'v1=other'] }
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers, now: vector.timestamp }).eventId).toBe('evt_1')
  })

  it('accepts timestamps within 5 minutes either way and refuses one second beyond', () => {
    const vector = vectors[0]!
    const verify = (now: number) => codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector), now }))
    expect(verify(vector.timestamp + 300)).toBeUndefined()
    expect(verify(vector.timestamp - 300)).toBeUndefined()
    expect(verify(vector.timestamp + 301)).toBe('timestamp_too_old')
    expect(verify(vector.timestamp - 301)).toBe('timestamp_too_new')
    const strict = (now: number) => codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector), now, toleranceSeconds: 10 }))
    expect(strict(vector.timestamp + 10)).toBeUndefined()
    expect(strict(vector.timestamp + 11)).toBe('timestamp_too_old')
    expect(strict(vector.timestamp - 11)).toBe('timestamp_too_new')
    // 0 is a tolerance like any other (the exact second only), not "use the default".
    const exact = (now: number) => codeOf(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector), now, toleranceSeconds: 0 }))
    expect(exact(vector.timestamp)).toBeUndefined()
    expect(exact(vector.timestamp + 1)).toBe('timestamp_too_old')
    expect(exact(vector.timestamp - 1)).toBe('timestamp_too_new')
  })

  it('refuses a secret that is not set (an unset environment variable) with a TypeError saying so', () => {
    // process.env.WEBHOOK_SECRET unset: a crash on the list's length said nothing of the secret.
    const vector = vectors[0]!
    for (const secret of [undefined, null, 42, [vector.secret, undefined]]) {
      expect(() => verifyWebhook({ secret: secret as unknown as string, body: vector.body, headers: headersFor(vector), now: vector.timestamp }), String(secret))
        .toThrow(new TypeError('verifyWebhook needs a signing secret (or a list of them), none empty'))
    }
  })

  it('says so when a secret that does not match has a line break or spaces around it (read from a file)', () => {
    // The sandbox's secrets have none: readFileSync without trim() was a bare signature_mismatch.
    const vector = vectors[0]!
    const verify = (secret: string | string[]) => () => verifyWebhook({ secret, body: vector.body, headers: headersFor(vector), now: vector.timestamp })
    expect(verify(`${vector.secret}\n`)).toThrow(new WebhookVerificationError('signature_mismatch', 'signature does not match the body and timestamp for this secret; the secret has a line break or spaces around it (read from a file?): trim it'))
    expect(verify(['whsec_the_other_one', ` ${vector.secret}`])).toThrow('for any of the 2 secrets; the secret has a line break or spaces around it')
    expect(verify(`${vector.secret}x`)).toThrow(/^signature does not match the body and timestamp for this secret$/)
  })

  it('says so when the secret given is the preview the API shows, or a report\'s masked copy, rather than the secret', () => {
    // GET /webhooks shows only secretPreview (whsec_...abcd): copied into a receiver's settings, it never matches.
    const vector = vectors[0]!
    const verify = (secret: string | string[]) => () => verifyWebhook({ secret, body: vector.body, headers: headersFor(vector), now: vector.timestamp })
    const hint = '; the secret is a preview (whsec_...abcd, as secretPreview and the reports show it), not the secret: use the signingSecret the endpoint\'s registration answered (POST /api/sandbox/webhooks, with rotate_secret: true for a new one)'
    expect(verify('whsec_...AbC9')).toThrow(new WebhookVerificationError('signature_mismatch', `signature does not match the body and timestamp for this secret${hint}`))
    expect(verify(['whsec_the_other_one', 'whsec_****AbC9'])).toThrow(`for any of the 2 secrets${hint}`)
  })

  it('refuses a tolerance or a clock that is no number of seconds, rather than letting every timestamp through', () => {
    // Number(process.env.WEBHOOK_TOLERANCE) when unset is NaN: every comparison with it is false,
    // so a delivery of any age passed and replays were no longer refused.
    const vector = vectors[0]!
    const verify = (options: { toleranceSeconds?: unknown; now?: unknown }) => () => verifyWebhook({ secret: vector.secret, body: vector.body, headers: headersFor(vector), now: vector.timestamp, ...options } as Parameters<typeof verifyWebhook>[0])
    for (const toleranceSeconds of [Number.NaN, -1, Number.POSITIVE_INFINITY, '300']) {
      expect(verify({ toleranceSeconds }), String(toleranceSeconds)).toThrow(new TypeError(`toleranceSeconds must be a number of seconds from 0, not ${typeof toleranceSeconds === 'string' ? `"${toleranceSeconds}"` : toleranceSeconds}`))
    }
    expect(verify({ now: Number.NaN })).toThrow(new TypeError('now must be the current time in unix seconds, not NaN'))
    // Date.now() is milliseconds: every delivery was refused as tens of thousands of years old.
    expect(verify({ now: vector.timestamp * 1000 })).toThrow(new TypeError(`now must be the current time in unix seconds, not ${vector.timestamp * 1000} (milliseconds? Math.floor(Date.now() / 1000))`))
  })

  it('refuses headers that are not there with a TypeError saying what to pass', () => {
    const vector = vectors[0]!
    expect(() => verifyWebhook({ secret: vector.secret, body: vector.body, headers: undefined as unknown as Headers, now: vector.timestamp }))
      .toThrow(new TypeError('verifyWebhook needs the request\'s headers (a Headers, or a record such as Node\'s request.headers), not undefined'))
  })

  it('accepts any matching v1 value among several, and headers in any case or as Headers', () => {
    const vector = vectors[1]!
    const headers = headersFor(vector, `v1=${'0'.repeat(64)} v1=${vector.signature}`)
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers, now: vector.timestamp }).eventId).toBe('evt_1')
    const upper = Object.fromEntries(Object.entries(headersFor(vector)).map(([name, value]) => [name.toUpperCase(), value]))
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers: upper, now: vector.timestamp }).eventType).toBe('sandbox.webhook.test')
    expect(verifyWebhook({ secret: vector.secret, body: vector.body, headers: new Headers(headersFor(vector)), now: vector.timestamp }).timestamp).toBe(vector.timestamp)
  })

  it('makes secrets in the decided format and previews them', () => {
    const secret = generateWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(generateWebhookSecret()).not.toBe(secret)
    expect(previewSecret(secret)).toBe(`whsec_...${secret.slice(-4)}`)
  })
})
