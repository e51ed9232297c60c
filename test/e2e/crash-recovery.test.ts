import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const BIN = join(import.meta.dirname, '../../bin/sandbox.js')
const children = new Set<ChildProcess>()

afterEach(() => {
  for (const child of children) child.kill('SIGKILL')
  children.clear()
})

const testRedis = useTestRedis()

/** Where the server keeps its state: `serve` flags, and the data dir on fs. */
interface StorageChoice {
  args: string[]
  dataDir?: string
}

/** The crash tests run on fs (a fresh data dir) and, with redis-server installed, on redis. */
const storages: Array<[string, () => Promise<StorageChoice>]> = [
  ['fs', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-crash-'))
    return { args: ['--storage', 'fs', '--data-dir', dataDir], dataDir }
  }],
]
if (hasRedis) {
  storages.push(['redis', async () => {
    const redis = await testRedis()
    await redis.flush()
    return { args: ['--storage', redis.url] }
  }])
}

/** Starts `sandbox serve` and resolves with its base URL. */
function startServer(storage: StorageChoice): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...storage.args, '--rate-limit', 'off', '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk) => {
      out += chunk
      const match = /sandbox ready: (\S+)/.exec(out)
      if (match) resolve({ url: match[1]!, child })
    })
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)))
  })
}

async function createLoan(url: string, key: string, idempotencyKey: string) {
  const response = await fetch(`${url}/api/sandbox/loans`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey, 'content-type': 'application/json' },
    body: JSON.stringify({ collateral_btc: 0.01, loan_amount: 200 }),
  })
  return { status: response.status, body: await response.json() }
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true })
  return entries.map(String)
}

describe.each(storages)('kill -9 during writes on %s', (_name, chooseStorage) => {
  it('leaves storage loadable and never applies an operation twice on retry', async () => {
    const storage = await chooseStorage()
    try {
      const keys = Array.from({ length: 6 }, (_, i) => `sk_sandbox_crash_${i}_${randomUUID().replaceAll('-', '')}`)
      const perKey = 60
      const plan = new Map(keys.map((key) => [key, Array.from({ length: perKey }, () => randomUUID())]))
      const acknowledged = new Map<string, string>() // idempotency key -> loan id answered before a crash

      const acknowledgedAfterCycle: number[] = []
      for (const delay of [120, 250, 400]) {
        const { url, child } = await startServer(storage)
        const exited = new Promise((resolve) => child.once('exit', resolve))
        const traffic = Promise.all(keys.map(async (key) => {
          for (const idem of plan.get(key)!) {
            try {
              const answer = await createLoan(url, key, idem)
              if (answer.status === 200 && !acknowledged.has(idem)) acknowledged.set(idem, answer.body.activeLoans.at(-1).id)
            } catch {
              return // the server died under us
            }
          }
        }))
        // Counted from this cycle's first answer, not from the start: on a busy machine none had come by then.
        const before = acknowledged.size
        for (let waited = 0; acknowledged.size === before && waited < 10_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
        await new Promise((resolve) => setTimeout(resolve, delay))
        child.kill('SIGKILL')
        await exited
        children.delete(child)
        await traffic
        acknowledgedAfterCycle.push(acknowledged.size)
      }
      // The kills landed while requests were still flowing, not after they had all finished.
      expect(acknowledgedAfterCycle[0]).toBeGreaterThan(0)
      expect(acknowledgedAfterCycle[0]).toBeLessThan(keys.length * perKey)

      const { url, child } = await startServer(storage)
      if (storage.dataDir) expect((await listFiles(storage.dataDir)).filter((file) => file.endsWith('.tmp'))).toEqual([])
      for (const key of keys) {
        const ids = plan.get(key)!
        for (const idem of ids) {
          const answer = await createLoan(url, key, idem)
          expect(answer.status).toBe(200)
          if (acknowledged.has(idem)) {
            expect(answer.body.idempotency_replayed).toBe(true)
            expect(answer.body.activeLoans.map((loan: { id: string }) => loan.id)).toContain(acknowledged.get(idem))
          }
        }
        const state = await (await fetch(`${url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })).json()
        // Each planned operation applied exactly once, whatever the crashes interrupted.
        expect(state.activeLoans).toHaveLength(perKey)
        expect(state.wallet.BTC).toBeCloseTo(2 - perKey * 0.01, 8)
      }
      expect(acknowledged.size).toBeGreaterThan(0)
      const stopped = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      expect(await stopped).toBe(0)
    } finally {
      if (storage.dataDir) await rm(storage.dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
