import { readFileSync } from 'node:fs'
import { request } from 'node:https'
import { connect } from 'node:net'
import { connect as connectTls } from 'node:tls'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'
import { SetupError } from '../../src/errors/setup-error.js'
import { newKey } from '../helpers/api.js'

const TLS = join(import.meta.dirname, '../fixtures/tls')
const read = (name: string) => readFileSync(join(TLS, name), 'utf8')
const pair = { cert: read('cert.pem'), key: read('key.pem') }
const open: { sandbox: Sandbox; listener?: SandboxListener }[] = []

afterEach(async () => {
  for (const { sandbox, listener } of open.splice(0)) {
    await listener?.close()
    await sandbox.close()
  }
})

async function start(tls: { cert: string | Uint8Array; key: string | Uint8Array }) {
  const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
  const entry: { sandbox: Sandbox; listener?: SandboxListener } = { sandbox }
  open.push(entry)
  entry.listener = await listenSandbox(sandbox, { tls })
  return entry.listener
}

/** GET over https, trusting the fixture certificate (the test process does not trust it otherwise). */
function getTrusted(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca: pair.cert, headers: { authorization: `Bearer ${newKey()}` } }, (response) => {
      let body = ''
      response.on('data', (chunk) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode!, body }))
    }).on('error', reject).end()
  })
}

describe('listenSandbox with tls', () => {
  it('answers https, with the certificate given, at an https:// URL', async () => {
    const listener = await start(pair)
    expect(listener.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    const { status, body } = await getTrusted(`${listener.url}/api/sandbox/config`)
    expect(status).toBe(200)
    expect(JSON.parse(body)).toHaveProperty('request_id')
  })

  // readFileSync without an encoding gives Buffers, which node's own https.createServer takes:
  // listenSandbox failed with listhen's "s.startsWith is not a function".
  it('takes the pair as Buffers too, as read with readFileSync and no encoding', async () => {
    const listener = await start({ cert: readFileSync(join(TLS, 'cert.pem')), key: readFileSync(join(TLS, 'key.pem')) })
    expect((await getTrusted(`${listener.url}/api/sandbox/config`)).status).toBe(200)
  })

  it('refuses a pair that is neither text nor bytes with a TypeError naming the field', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    open.push({ sandbox })
    await expect(listenSandbox(sandbox, { tls: { cert: pair.cert, key: { path: 'key.pem' } as never } })).rejects.toThrow(new TypeError('tls.key: expected the PEM text (a string, or a Buffer as readFileSync gives), not an object'))
  })

  it('names its https origin as the server in the OpenAPI document it serves', async () => {
    const listener = await start(pair)
    const { status, body } = await getTrusted(`${listener.url}/api/sandbox/openapi.json`)
    expect(status).toBe(200)
    expect(JSON.parse(body).servers).toEqual([{ url: listener.url, description: 'the sandbox that served this document' }])
  })

  it('answers plain HTTP sent to its port with a 400 naming the https:// URL, not a reset connection', async () => {
    const listener = await start({ cert: `\uFEFF\n${pair.cert}`, key: pair.key })
    const plain = listener.url.replace('https://', 'http://')
    const response = await fetch(`${plain}/api/sandbox/config`)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error_code: 'INVALID_REQUEST', error: `This server answers https only: send the request to ${listener.url}.` })
  })

  // Listening on every interface (a container's 0.0.0.0), the client came by a name of its own
  // (http://sandbox:4010): "send the request to https://0.0.0.0:4010" sent it nowhere it could reach.
  it('does not tell a client to use the unspecified address 0.0.0.0 when listening on every interface', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    const entry: { sandbox: Sandbox; listener?: SandboxListener } = { sandbox }
    open.push(entry)
    entry.listener = await listenSandbox(sandbox, { host: '0.0.0.0', tls: pair })
    const response = await fetch(`http://127.0.0.1:${entry.listener.port}/api/sandbox/config`)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error_code: 'INVALID_REQUEST', error: `This server answers https only: send the request with https:// to the same host and port (${entry.listener.port}).` })
  })

  // Node's own TLS handshake limit is 120 s: a client that connected and never spoke held its
  // socket that long, where plain http cuts it at the headers limit.
  it('closes a connection that does not finish its TLS handshake within the headers limit', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    const entry: { sandbox: Sandbox; listener?: SandboxListener } = { sandbox }
    open.push(entry)
    entry.listener = await listenSandbox(sandbox, { tls: pair, timeouts: { headersMs: 300, requestMs: 300, checkIntervalMs: 100 } })
    for (const first of ['', '\x16\x03\x01']) {
      const closed = await new Promise<boolean>((resolve) => {
        const socket = connect(entry.listener!.port, '127.0.0.1', () => { if (first) socket.write(first, 'latin1') })
        socket.on('error', () => {})
        socket.on('close', () => resolve(true))
        // A hang bound, far above the limit: Node's own would keep the socket for 120 s.
        setTimeout(() => { socket.destroy(); resolve(false) }, 10_000)
      })
      expect([first, closed]).toEqual([first, true])
    }
  }, 30_000)

  it('keeps a connection whose handshake finished past that limit, for the next request on it', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    const entry: { sandbox: Sandbox; listener?: SandboxListener } = { sandbox }
    open.push(entry)
    entry.listener = await listenSandbox(sandbox, { tls: pair, timeouts: { headersMs: 300, requestMs: 300, checkIntervalMs: 100 } })
    const socket = connectTls({ port: entry.listener.port, host: '127.0.0.1', ca: pair.cert })
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    const answers = (count: number) => new Promise<void>((resolve, reject) => {
      const check = () => (received.split('HTTP/1.1 200').length - 1 >= count ? resolve() : undefined)
      socket.on('data', check)
      socket.once('close', () => reject(new Error(`closed after ${received.split('HTTP/1.1 200').length - 1} answers`)))
      check()
    })
    const get = `GET /api/sandbox/config HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newKey()}\r\n\r\n`
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()))
    socket.write(get)
    await answers(1)
    // Past the handshake limit, within keep-alive (5 s): the connection is still there.
    await new Promise((resolve) => setTimeout(resolve, 800))
    socket.write(get)
    await answers(2)
    socket.destroy()
  }, 30_000)

  it.each([
    ['a key of another certificate', { cert: pair.cert, key: read('proxied-key.pem') }, 'the private key does not belong to the certificate'],
    ['a certificate file that holds none', { cert: read('README.md'), key: pair.key }, 'the certificate holds no PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['the key given as the certificate', { cert: pair.key, key: pair.key }, 'the certificate holds no PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['the certificate given as the key', { cert: pair.cert, key: pair.cert }, 'the private key holds no PEM private key (-----BEGIN PRIVATE KEY-----)'],
  ])('refuses %s before listening, as a SetupError', async (_what, tls, message) => {
    const sandbox = await createSandbox({ storage: 'memory', logError: () => {} })
    open.push({ sandbox })
    await expect(listenSandbox(sandbox, { tls })).rejects.toThrow(new SetupError(message))
  })
})
