import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, newKey } from '../helpers/api.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const makeDir = useTempDirs('file-modes')
let sandbox: Sandbox | undefined
afterEach(async () => {
  await sandbox?.close()
  sandbox = undefined
})

/** Permission bits of every file under DIR, by path relative to it. */
async function listModes(dir: string): Promise<Record<string, number>> {
  const modes: Record<string, number> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    // Listed while the server runs, a checkpoint's temp file may be renamed between readdir and stat.
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (info) modes[path.slice(dir.length + 1)] = info.mode & 0o777
  }
  return modes
}

describe.skipIf(process.platform === 'win32')('fs storage file modes', () => {
  it('keeps webhook signing secrets and sessions to the owner (0600), as the keys file is; the request log stays readable for sandbox logs', async () => {
    const dataDir = await makeDir()
    sandbox = await createSandbox({ storage: 'fs', dataDir, rateLimit: false, allowLocalWebhooks: true, webhookForwardTo: 'http://127.0.0.1:9/hooks' })
    const key = newKey('modes')
    const send = (idempotencyKey: string, body: object) => sandbox!.fetch(buildRequest('http://x', 'POST', '/api/sandbox/webhooks', { body, idempotencyKey }, key))
    const registered = await (await send('register', { url: 'http://127.0.0.1:9/endpoint' })).json() as { endpoint: { signingSecret: string } }
    expect(registered.endpoint.signingSecret).toMatch(/^whsec_/)
    // Enough stored answers (each holding the secret) to move some into an idempotency batch file.
    for (let i = 0; i < 20; i++) expect((await send(`again-${i}`, { url: 'http://127.0.0.1:9/endpoint', rotate_secret: true })).status).toBe(200)
    const running = await listModes(dataDir)
    const journals = Object.entries(running).filter(([path]) => /^journal-/.test(path))
    expect(journals.length).toBeGreaterThan(0)
    for (const [path, mode] of journals) expect([path, mode.toString(8)]).toEqual([path, '600'])
    await sandbox.close()
    sandbox = undefined

    const modes = await listModes(dataDir)
    const privateFiles = Object.entries(modes).filter(([path]) => /^(session|idem|webhooks|whq)\//.test(path))
    expect(privateFiles.map(([path]) => path.split('/')[0])).toEqual(expect.arrayContaining(['session', 'idem', 'webhooks']))
    expect(Object.keys(modes)).toContain('webhooks/forward-secret')
    for (const [path, mode] of privateFiles) expect([path, mode.toString(8)]).toEqual([path, '600'])
    const shared = (0o666 & ~process.umask()).toString(8)
    const readable = Object.entries(modes).filter(([path]) => path.startsWith('reqlog/') || path === 'storage-format')
    expect(readable.length).toBeGreaterThan(1)
    for (const [path, mode] of readable) expect([path, mode.toString(8)]).toEqual([path, shared])
  })
})
