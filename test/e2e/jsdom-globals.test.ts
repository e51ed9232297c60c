import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useTempDirs } from '../helpers/temp-dirs.js'

const ROOT = join(import.meta.dirname, '../..')
const makeTempDir = useTempDirs('sandbox-jsdom-globals')

// A test file in a jsdom environment (vitest's `environment: 'jsdom'`, Jest's jest-environment-jsdom)
// sees the window's Uint8Array and ArrayBuffer as globals, the package's code included, while the
// Buffers Node gives (fs, http, TextEncoder) are made by Node's own: `instanceof Uint8Array` is
// false for every one of them. The script swaps the globals as those environments do, then uses
// the built package as such a test would.
const SCRIPT = `
import vm from 'node:vm'
import { readFileSync } from 'node:fs'
const windowRealm = vm.createContext()
globalThis.Uint8Array = vm.runInContext('Uint8Array', windowRealm)
globalThis.ArrayBuffer = vm.runInContext('ArrayBuffer', windowRealm)
const { createSandbox, listenSandbox, createSandboxClient, signWebhook, verifyWebhook, constructWebhookEvent } = await import(process.env.PACKAGE_ROOT)
const outcome = async (run) => { try { return await run() } catch (error) { return error.name + ': ' + error.message } }
const body = JSON.stringify({ id: 'evt_jsdom_1', type: 'sandbox.webhook.test', created_at: '2026-01-01T00:00:00.000Z', api_version: '0.3.0', data: { object: {} } })
const secret = 'whsec_jsdom_environment_0001'
const { headers } = signWebhook({ secret, body, eventId: 'evt_jsdom_1', eventType: 'sandbox.webhook.test' })
const results = {
  verifyBuffer: await outcome(() => verifyWebhook({ secret, body: Buffer.from(body), headers }).eventId),
  constructEncoded: await outcome(() => constructWebhookEvent({ secret, body: new TextEncoder().encode(body), headers }).id),
  https: await outcome(async () => {
    const sandbox = await createSandbox()
    try {
      const listener = await listenSandbox(sandbox, { tls: { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } })
      return listener.url.split(':')[0]
    } finally { await sandbox.close() }
  }),
  fsRestart: await outcome(async () => {
    const apiKey = 'sk_sandbox_jsdom_environment_0001'
    const walk = async (act) => {
      const sandbox = await createSandbox({ storage: 'fs', dataDir: process.env.DATA_DIR })
      try {
        const client = createSandboxClient({ baseUrl: (await listenSandbox(sandbox)).url, apiKey })
        return await act(client)
      } finally { await sandbox.close() }
    }
    await walk((client) => client.createLoan({ collateral_btc: 0.005, loan_amount: 200 }))
    return await walk(async (client) => (await client.listLoans()).activeLoans.map((loan) => loan.debt))
  }),
}
console.log(JSON.stringify(results))
`

describe('the package in a test file of a jsdom environment (the window\'s Uint8Array as global)', () => {
  it('takes Node\'s Buffers as bytes: a webhook body, a TLS pair read with readFileSync, and what fs storage reads back', async () => {
    const dir = await makeTempDir()
    await writeFile(join(dir, 'use.mjs'), SCRIPT)
    const env = {
      ...process.env,
      PACKAGE_ROOT: pathToFileURL(join(ROOT, 'dist/index.js')).href,
      TLS_CERT: join(ROOT, 'test/fixtures/tls/cert.pem'),
      TLS_KEY: join(ROOT, 'test/fixtures/tls/key.pem'),
      DATA_DIR: join(dir, 'data'),
    }
    const { stdout } = await promisify(execFile)(process.execPath, ['use.mjs'], { cwd: dir, env })
    // It was a TypeError saying a JSON parser had run (webhooks) or that no Buffer was given
    // (tls), and a data dir the sandbox itself wrote refused as an unreadable storage format.
    expect(JSON.parse(stdout)).toEqual({ verifyBuffer: 'evt_jsdom_1', constructEncoded: 'evt_jsdom_1', https: 'https', fsRestart: [200] })
  }, 60_000)
})
