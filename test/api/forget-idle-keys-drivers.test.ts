import { afterEach, describe, expect, it } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox, SandboxOptions } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/** `--forget-idle-keys` on the storage a long-lived server uses: fs and redis, across a restart. */

const DAY = 24 * 3600_000
const tempDir = useTempDirs('sandbox-forget-drivers')
const testRedis = hasRedis ? useTestRedis() : undefined

const open = new Set<Sandbox>()
afterEach(async () => {
  await Promise.all([...open].map((sandbox) => sandbox.close()))
  open.clear()
})

async function start(storage: Pick<SandboxOptions, 'storage' | 'dataDir'>, options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await createSandbox({ ...storage, rateLimit: false, logError: () => {}, onStorageStatus: () => {}, forgetIdleKeysMs: DAY, ...options })
  open.add(sandbox)
  return sandbox
}

async function stop(sandbox: Sandbox): Promise<void> {
  open.delete(sandbox)
  await sandbox.close()
}

async function call(sandbox: Sandbox, key: string, method: string, path: string, body?: object) {
  const response = await sandbox.fetch(buildRequest('http://x', method, path, { body }, key))
  return { status: response.status, body: await response.json() }
}

async function checkForgetsAcrossRestart(storage: Pick<SandboxOptions, 'storage' | 'dataDir'>): Promise<void> {
  const [idle, kept] = [newKey('idle'), newKey('kept')]
  const first = await start(storage)
  expect((await call(first, idle, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
  for (let i = 0; i < 20; i++) expect((await call(first, idle, 'POST', '/api/sandbox/partner', { name: `Acme ${i}` })).status).toBe(200)
  expect((await call(first, kept, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
  // As if the idle key's last request had come three days ago.
  await first.storage.setItem(`keyuse:${deriveKeyId(idle)}:default`, { at: new Date(Date.now() - 3 * DAY).toISOString() })
  await stop(first)
  const forgotten: number[] = []
  const second = await start(storage, { onKeysForgotten: (count) => forgotten.push(count) })
  await expect.poll(() => forgotten, { timeout: 10_000 }).toEqual([1])
  expect((await second.storage.getKeys()).filter((name) => name.includes(deriveKeyId(idle)))).toEqual([])
  expect((await second.storage.getKeys()).some((name) => name.includes(deriveKeyId(kept)))).toBe(true)
  expect((await call(second, idle, 'GET', '/api/sandbox/loans')).body.activeLoans).toEqual([])
  expect((await call(second, kept, 'GET', '/api/sandbox/loans')).body.activeLoans).toHaveLength(1)
}

describe('--forget-idle-keys on persistent storage', () => {
  it('fs: forgets at the start a key whose stored last use is past the duration, and nothing of another key', async () => {
    await checkForgetsAcrossRestart({ storage: 'fs', dataDir: await tempDir() })
  })

  it.runIf(hasRedis)('redis: the same', async () => {
    const redis = await testRedis!()
    await checkForgetsAcrossRestart({ storage: redis.url as `redis://${string}` })
  })
})
