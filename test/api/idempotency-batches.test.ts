import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { deriveKeyId } from '../../src/server/auth.js'
import { FIRST_IDEMPOTENCY_SWEEP_MS, IDEMPOTENCY_SWEEP_MS } from '../../src/server/idempotency-expiry.js'
import type { SessionDoc } from '../../src/server/session-doc.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'

const KYT = { action: 'run_kyt' }

/** POSTs and returns the status, the exact answer text and the parsed body. */
async function post(sandbox: Sandbox, key: string, path: string, body: object, idempotencyKey: string) {
  const response = await sandbox.fetch(buildRequest('http://x', 'POST', path, { body, idempotencyKey }, key))
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text), replayed: response.headers.get('idempotent-replayed') }
}

/** The answer text without what differs between an answer and its replay. */
const sameAnswer = (text: string) => text.replace(/"request_id":"req_[0-9a-f]+",?/, '').replace(/,?"idempotency_replayed":(true|false)/, '')

/** Memory storage that counts reads of idempotency batch files. */
function createCountingStorage() {
  const memory = memoryDriver()
  const counts = { batchReads: 0 }
  const counting = defineDriver(() => ({
    ...memory,
    name: 'counting-memory',
    getItem(key: string, options: object) {
      if (key.startsWith('idem:')) counts.batchReads++
      return memory.getItem(key, options)
    },
  }))
  return { storage: createStorage({ driver: counting(undefined) }), counts }
}

let sandboxes: Sandbox[] = []
async function closeSandboxes(): Promise<void> {
  const open = sandboxes
  sandboxes = []
  await Promise.all(open.map((sandbox) => sandbox.close()))
}

afterEach(async () => {
  vi.useRealTimers()
  await closeSandboxes()
})

async function open(options: Parameters<typeof createSandbox>[0]): Promise<Sandbox> {
  const sandbox = await createSandbox({ rateLimit: false, ...options })
  sandboxes.push(sandbox)
  return sandbox
}

describe('idempotency records moved to batch files', () => {
  it('replays and refuses keys long moved out of the document after a restart on fs, while the document stays small', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-idem-batches-'))
    try {
      const key = newKey()
      const first = await open({ storage: 'fs', dataDir })
      const loan = await post(first, key, '/api/sandbox/loans', LOAN, 'loan-0')
      for (let i = 0; i < 600; i++) expect((await post(first, key, '/api/sandbox/loans/flow', KYT, `kyt-${i}`)).status).toBe(409)
      await first.close()
      const [docFile] = await readdir(join(dataDir, 'session'))
      // 601 records: ~115 KB of document when each kept ~190 B there for its 24 hours.
      expect((await stat(join(dataDir, 'session', docFile!))).size).toBeLessThan(24_000)

      const second = await open({ storage: 'fs', dataDir })
      const replay = await post(second, key, '/api/sandbox/loans', LOAN, 'loan-0')
      expect([replay.status, replay.replayed, replay.body.idempotency_replayed]).toEqual([200, 'true', true])
      expect(sameAnswer(replay.text)).toBe(sameAnswer(loan.text))
      for (const i of [0, 17, 299, 599]) {
        const kyt = await post(second, key, '/api/sandbox/loans/flow', KYT, `kyt-${i}`)
        expect([kyt.status, kyt.body.error_code, kyt.body.idempotency_replayed]).toEqual([409, 'FLOW_CONFLICT', true])
      }
      const conflicts = [
        await post(second, key, '/api/sandbox/loans', { ...LOAN, loan_amount: 1000 }, 'loan-0'),
        await post(second, key, '/api/sandbox/loans', LOAN, 'kyt-5'),
      ]
      for (const conflict of conflicts) expect([conflict.status, conflict.body.error_code]).toEqual([409, 'IDEMPOTENCY_KEY_CONFLICT'])
      // A record in a batch file still names the request that used its key first.
      expect(conflicts[0]!.body.details.first_request_id).toBe(loan.body.request_id)
      const fresh = await post(second, key, '/api/sandbox/loans', LOAN, 'loan-1')
      expect([fresh.status, fresh.body.idempotency_replayed, fresh.body.activeLoans.length]).toEqual([200, false, 2])
    } finally {
      // Closed first: a server whose data dir is deleted under it says so when it stops.
      await closeSandboxes()
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('keeps the document small after thousands of POSTs, and a POST with a new key reads no batch file', async () => {
    const { storage, counts } = createCountingStorage()
    const sandbox = await open({ storage })
    const key = newKey()
    for (let i = 0; i < 3_000; i++) await post(sandbox, key, '/api/sandbox/loans/flow', KYT, `kyt-${i}`)
    await sandbox.flush()
    const [docKey] = await storage.getKeys('session')
    // ~12 B a record (its key's index entry); 593 KB when each kept its metadata in the document.
    expect(String(await storage.getItemRaw(docKey!)).length).toBeLessThan(60_000)
    counts.batchReads = 0
    for (let i = 0; i < 50; i++) expect((await post(sandbox, key, '/api/sandbox/loans/flow', KYT, `new-${i}`)).replayed).toBeNull()
    expect(counts.batchReads).toBe(0)
    expect((await post(sandbox, key, '/api/sandbox/loans/flow', KYT, 'kyt-1')).body.idempotency_replayed).toBe(true)
    expect(counts.batchReads).toBe(1)
  })

  it('forgets a record in a batch that is still kept once the record itself is 24 hours old', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const sandbox = await open({ storage: createStorage({ driver: memoryDriver() }) })
    const key = newKey()
    await post(sandbox, key, '/api/sandbox/loans/flow', KYT, 'early')
    vi.setSystemTime(Date.now() + 12 * 3600_000)
    // Enough later records to move `early` into a batch along with them.
    for (let i = 0; i < 20; i++) await post(sandbox, key, '/api/sandbox/loans/flow', KYT, `later-${i}`)
    vi.setSystemTime(Date.now() + 13 * 3600_000)
    expect((await post(sandbox, key, '/api/sandbox/loans/flow', KYT, 'later-3')).body.idempotency_replayed).toBe(true)
    const again = await post(sandbox, key, '/api/sandbox/loans', LOAN, 'early')
    expect([again.status, again.body.idempotency_replayed]).toEqual([200, false])
  })

  it('removes the records of a key nobody uses again once they are 24 hours old, batch files included', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createStorage({ driver: memoryDriver() })
    const sandbox = await open({ storage })
    const [idle, busy] = [newKey('idle'), newKey('busy')]
    await post(sandbox, idle, '/api/sandbox/loans', LOAN, 'loan-0')
    // Enough records to move some into a batch file.
    for (let i = 0; i < 20; i++) await post(sandbox, idle, '/api/sandbox/loans/flow', KYT, `kyt-${i}`)
    const before = await sandbox.fetch(buildRequest('http://x', 'GET', '/api/sandbox/loans', {}, idle)).then((response) => response.json())
    const idleDoc = () => storage.getItem<SessionDoc>(`session:${deriveKeyId(idle)}:default`)
    expect((await idleDoc())!.idempotency.length + (await idleDoc())!.response_batches.length).toBeGreaterThan(0)
    expect(await storage.getKeys('idem')).not.toEqual([])

    vi.setSystemTime(Date.now() + 25 * 3600_000)
    await post(sandbox, busy, '/api/sandbox/loans/flow', KYT, 'kyt-0')
    // The first check comes a minute after the start, then every hour.
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect(await storage.getKeys('idem')).toEqual([]))
    expect(await idleDoc()).toMatchObject({ idempotency: [], response_batches: [] })
    // The key's state is untouched; only what its 24 hours covered is gone.
    const after = await sandbox.fetch(buildRequest('http://x', 'GET', '/api/sandbox/loans', {}, idle)).then((response) => response.json())
    expect({ ...after, request_id: '' }).toEqual({ ...before, request_id: '' })

    // Records made since are kept until their own 24 hours are over, at a later check.
    await post(sandbox, idle, '/api/sandbox/loans/flow', KYT, 'late')
    await vi.advanceTimersByTimeAsync(IDEMPOTENCY_SWEEP_MS)
    expect((await idleDoc())!.idempotency.map((record) => record.key)).toEqual(['late'])
    vi.setSystemTime(Date.now() + 24 * 3600_000)
    await vi.advanceTimersByTimeAsync(IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect((await idleDoc())!.idempotency).toEqual([]))
  })

  it('does not check memory storage, which starts empty, before the server has run 24 hours', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const sandbox = await open({ storage: 'memory' })
    const key = newKey('memory')
    await post(sandbox, key, '/api/sandbox/loans', LOAN, 'loan-0')
    const records = async () => (await sandbox.storage.getItem<SessionDoc>(`session:${deriveKeyId(key)}:default`))!.idempotency.length
    expect(await records()).toBe(1)
    // A clock moved on (a laptop's sleep): the record is past its 24 hours, yet no check comes at a minute.
    vi.setSystemTime(Date.now() + 25 * 3600_000)
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    expect(await records()).toBe(1)
    await vi.advanceTimersByTimeAsync(24 * 3600_000 - FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect(await records()).toBe(0))
  })

  it('replays and refuses the keys of a document and batch files written by the previous version', async () => {
    const fixture = JSON.parse(await readFile(new URL('../fixtures/idempotency-v1/storage.json', import.meta.url), 'utf8')) as {
      written_at: string
      api_key: string
      items: Record<string, string>
      answers: Record<string, { status: number; path: string; body: object; text: string }>
    }
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.parse(fixture.written_at) + 3600_000)
    const storage = createStorage({ driver: memoryDriver() })
    for (const [name, text] of Object.entries(fixture.items)) await storage.setItemRaw(name, text)
    const sandbox = await open({ storage })
    const key = fixture.api_key
    const [docKey] = await storage.getKeys('session')
    const before = String(await storage.getItemRaw(docKey!)).length

    const replayAll = async () => {
      // old-loan and old-kyt-3 are in the previous version's batch 1, old-kyt-30 in batch 2, old-profile inline.
      for (const [idempotencyKey, { status, path, body, text }] of Object.entries(fixture.answers)) {
        const replay = await post(sandbox, key, path, body, idempotencyKey)
        expect([idempotencyKey, replay.status, replay.body.idempotency_replayed]).toEqual([idempotencyKey, status, true])
        expect(sameAnswer(replay.text)).toBe(sameAnswer(text))
      }
      const conflict = await post(sandbox, key, '/api/sandbox/partner', { name: 'Other' }, 'old-kyt-3')
      expect([conflict.status, conflict.body.error_code]).toEqual([409, 'IDEMPOTENCY_KEY_CONFLICT'])
    }
    await replayAll()
    for (let i = 0; i < 100; i++) await post(sandbox, key, '/api/sandbox/loans/flow', KYT, `new-${i}`)
    await replayAll()
    expect((await post(sandbox, key, '/api/sandbox/loans/flow', KYT, 'new-2')).body.idempotency_replayed).toBe(true)
    await sandbox.flush()
    // 100 new records, moved to batches, add their index entries (~12 B each), not ~190 B each.
    expect(String(await storage.getItemRaw(docKey!)).length - before).toBeLessThan(3_000)

    vi.setSystemTime(Date.now() + 24 * 3600_000)
    const forgotten = await post(sandbox, key, '/api/sandbox/loans/flow', { action: 'start_collateral_transfer', ...LOAN }, 'old-kyt-3')
    expect([forgotten.status, forgotten.body.idempotency_replayed]).toEqual([200, false])
    expect((await storage.getKeys('idem')).length).toBe(0)
  })
})
