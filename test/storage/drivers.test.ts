import { spawn, spawnSync } from 'node:child_process'
import fs, { readFileSync } from 'node:fs'
import { cp, mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { createStorage, defineDriver, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it, vi } from 'vitest'
import { decodeRecords, encodeRecords } from '../../src/storage/journal-format.js'
import { createDocStore, createSandboxStorage, journaledFsDriver, parseStorageKind, StorageError } from '../../src/storage/index.js'
import { createSessionStore } from '../../src/server/session-store.js'
import { checkStoredSessions } from '../../src/server/idempotency-expiry.js'
import { createKeyedMutex } from '../../src/storage/keyed-mutex.js'
import { fixtureConfig } from '../unit/domain-helpers.js'
import type { SessionDoc } from '../../src/server/session-doc.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { refuseOnFillingDisk } from '../helpers/file-faults.js'


const tempDir = useTempDirs('sandbox-storage')
const testRedis = useTestRedis()

const drivers: Array<[string, () => Promise<Storage>]> = [
  ['memory', () => createSandboxStorage({ kind: 'memory' })],
  ['fs', async () => createSandboxStorage({ kind: 'fs', dataDir: await tempDir() })],
  ['fs with journal', async () => createSandboxStorage({ kind: 'fs', dataDir: await tempDir(), owner: true })],
]
// Each test starts from an empty database, as the other drivers start from an empty place.
if (hasRedis) {
  drivers.push(['redis', async () => {
    const redis = await testRedis()
    await redis.flush()
    return createSandboxStorage({ kind: 'redis', url: redis.url })
  }])
}

describe.each(drivers)('storage on %s', (_name, open) => {
  it('sets, gets, lists by prefix and removes', async () => {
    const storage = await open()
    await storage.setItem('session:k1:default', { a: 1 })
    await storage.setItem('session:k2:default', { a: 2 })
    await storage.setItem('reqlog:k1', [1, 2])
    expect(await storage.getItem('session:k1:default')).toEqual({ a: 1 })
    expect(await storage.hasItem('session:k1:default')).toBe(true)
    expect(await storage.hasItem('session:k9:default')).toBe(false)
    expect(await storage.hasItem('nowhere:k1')).toBe(false)
    expect((await storage.getKeys('session')).sort()).toEqual(['session:k1:default', 'session:k2:default'])
    await storage.removeItem('session:k1:default')
    expect(await storage.getItem('session:k1:default')).toBeNull()
    expect(await storage.hasItem('session:k1:default')).toBe(false)
    expect(await storage.getKeys('session')).toEqual(['session:k2:default'])
    await storage.dispose()
  })

  it('reads several items at once, in the order asked, null for one it does not hold', async () => {
    const storage = await open()
    await storage.setItem('reqlog:b1', [{ n: 1 }])
    await storage.setItem('reqlog:b2', [{ n: 2 }])
    expect(await storage.getItems(['reqlog:b2', 'reqlog:none', 'reqlog:b1'])).toEqual([
      { key: 'reqlog:b2', value: [{ n: 2 }] },
      { key: 'reqlog:none', value: null },
      { key: 'reqlog:b1', value: [{ n: 1 }] },
    ])
    await storage.dispose()
  })

  it('keeps documents apart by prefix and id, and serves cached reads', async () => {
    const storage = await open()
    const sessions = createDocStore<{ n: number }>(storage, { prefix: 'session' })
    const other = createDocStore<{ n: number }>(storage, { prefix: 'other' })
    await sessions.write('a', { n: 1 })
    await other.write('a', { n: 2 })
    expect(await sessions.read('a')).toEqual({ n: 1 })
    expect(await other.read('a')).toEqual({ n: 2 })
    expect(await sessions.read('missing')).toBeNull()
    expect(await sessions.listIds()).toEqual(['a'])
    // A cached read does not touch the backend.
    await storage.removeItem('session:a')
    expect(await sessions.read('a')).toEqual({ n: 1 })
    await storage.dispose()
  })

  it('reads a document past the cache without keeping it there, and serves the held version of one in use', async () => {
    const storage = await open()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'session', cacheSize: 1 })
    await docs.write('idle', { v: 1 })
    await docs.write('hot', { v: 2 })
    expect(await docs.readUncached('idle')).toEqual({ v: 1 })
    expect(await docs.readUncached('missing')).toBeNull()
    // The document in use stays held: a pass over every document does not push it out.
    expect(docs.peek('hot')).toEqual({ v: 2 })
    expect(docs.peek('idle')).toBeUndefined()
    docs.stage('hot', { v: 3 })
    expect(await docs.readUncached('hot')).toEqual({ v: 3 })
    await storage.dispose()
  })

  it('keeps staged documents: read back, never evicted by other reads and writes, and written by the next write', async () => {
    const storage = await open()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'session', cacheSize: 2 })
    await docs.write('s', { v: 1 })
    docs.stage('s', { v: 2 })
    for (let i = 0; i < 10; i++) await docs.write(`other${i}`, { v: i })
    expect(docs.isStaged('s')).toBe(true)
    expect(docs.listStaged()).toEqual(['s'])
    expect(await docs.read('s')).toEqual({ v: 2 })
    expect(await storage.getItem('session:s')).toEqual({ v: 1 })
    await docs.write('s', { v: 3 })
    expect(docs.listStaged()).toEqual([])
    expect(await storage.getItem('session:s')).toEqual({ v: 3 })
    await storage.dispose()
  })

  it('keeps a held document in memory past the cache size, with its latest version, until every holder releases it', async () => {
    const storage = await open()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'session', cacheSize: 2 })
    await docs.write('held', { v: 1 })
    const first = docs.hold('held')
    const second = docs.hold('held')
    for (let i = 0; i < 10; i++) await docs.write(`other${i}`, { v: i })
    // The version in memory, not storage's: the replace below is not written, so only memory has it.
    docs.replace('held', { v: 2 })
    expect(docs.peek('held')).toEqual({ v: 2 })
    for (let i = 0; i < 10; i++) await docs.read(`other${i}`)
    expect(await docs.read('held')).toEqual({ v: 2 })
    first()
    first()
    for (let i = 0; i < 10; i++) await docs.read(`other${i}`)
    expect(await docs.readUncached('held')).toEqual({ v: 2 })
    second()
    for (let i = 0; i < 10; i++) await docs.read(`other${i}`)
    expect(docs.peek('held')).toBeUndefined()
    expect(await docs.read('held')).toEqual({ v: 1 })
    await storage.dispose()
  })

  it('forgets a held document that is removed, even once the cache has let go of it', async () => {
    const storage = await open()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'session', cacheSize: 2 })
    await docs.write('held', { v: 1 })
    const release = docs.hold('held')
    for (let i = 0; i < 10; i++) await docs.write(`other${i}`, { v: i })
    // A session deleted while its webhook worker holds it: gone, not served from memory.
    await docs.remove('held')
    expect(docs.peek('held')).toBeUndefined()
    expect(await docs.read('held')).toBeNull()
    expect(await docs.readUncached('held')).toBeNull()
    release()
    await storage.dispose()
  })

  it('applies a session patch to every load until the session is written, held in memory or read back from storage', async () => {
    const storage = await open()
    const sessions = createSessionStore(storage, { initialBalances: { BTC: 2, USDT: 10_000 }, config: fixtureConfig, cacheSize: 1 })
    const [a, b] = ['ka', 'kb'].map((keyId) => ({ apiKey: '', keyId, sessionId: 'default' }))
    const count = (doc: SessionDoc): SessionDoc => ({ ...doc, event_seq: doc.event_seq + 1 })
    const stored = async () => JSON.parse(String(await storage.getItemRaw('session:ka:default'))).event_seq
    await sessions.save(a!, sessions.createSessionDoc('2026-11-22T10:00:00.000Z'))
    sessions.patch(a!, count)
    expect((await sessions.load(a!)).event_seq).toBe(1)
    expect((await sessions.load(a!)).event_seq).toBe(1)
    // Another session's write evicts this one (cache of one): read back, patched once.
    await sessions.save(b!, sessions.createSessionDoc('2026-11-22T10:00:00.000Z'))
    expect((await sessions.load(a!)).event_seq).toBe(1)
    expect((await sessions.load(a!)).event_seq).toBe(1)
    sessions.patch(a!, count)
    expect((await sessions.load(a!)).event_seq).toBe(2)
    expect(await stored()).toBe(0)
    await sessions.save(a!, await sessions.load(a!))
    expect(await stored()).toBe(2)
    await sessions.load(b!)
    expect((await sessions.load(a!)).event_seq).toBe(2)
    await storage.dispose()
  })

  it('replays a stored answer byte for byte once read back from storage, whether the document holds it as JSON or (older documents) as a string', async () => {
    const storage = await open()
    const sessions = createSessionStore(storage, { initialBalances: { BTC: 2, USDT: 10_000 }, config: fixtureConfig, cacheSize: 1 })
    const [a, b] = ['ka', 'kb'].map((keyId) => ({ apiKey: '', keyId, sessionId: 'default' }))
    const text = JSON.stringify({ wallet: { BTC: 2, USDT: 10_000.5 }, note: 'a "quoted" \\ word, é, \u2028, 😀', big: 1e21, small: 1e-7, list: [1, { x: null }], 10: 'ten', 2: 'two' })
    const record = { key: 'idem-1', fingerprint: 'f', status: 200, created_at: new Date().toISOString() }
    const doc = sessions.createSessionDoc(record.created_at)
    await sessions.save(a!, { ...doc, idempotency: [{ ...record, answer: text }] })
    // The answer is in the document as JSON, not as an escaped copy in a string.
    expect(JSON.parse(String(await storage.getItemRaw('session:ka:default'))).idempotency[0].answer).toEqual(JSON.parse(text))
    await sessions.save(b!, doc)
    const loaded = await sessions.load(a!)
    expect(typeof loaded.idempotency[0]!.answer).toBe('object')
    expect(await sessions.readStoredResponse(a!, loaded.idempotency[0]!, loaded.book)).toBe(text)
    await storage.setItemRaw('session:ka:default', JSON.stringify({ ...doc, idempotency: [{ ...record, response: text }] }))
    await sessions.load(b!)
    const older = await sessions.load(a!)
    expect(await sessions.readStoredResponse(a!, older.idempotency[0]!, older.book)).toBe(text)
    await storage.dispose()
  })

  it('reads again at a later expiry check only the sessions whose records are due, or that changed since', async () => {
    const storage = await open()
    const options = { initialBalances: { BTC: 2, USDT: 10_000 }, config: fixtureConfig, cacheSize: 1 }
    const hour = 3600_000
    const now = Date.now()
    const principal = (keyId: string) => ({ apiKey: '', keyId, sessionId: 'default' })
    const withRecord = (sessions: ReturnType<typeof createSessionStore>, madeAt: number) => {
      const created_at = new Date(madeAt).toISOString()
      return { ...sessions.createSessionDoc(created_at), idempotency: [{ key: 'idem-1', fingerprint: 'f', status: 200, created_at, answer: '{}' }] }
    }
    // Stored by an earlier server: two due within the hour, twenty a day later, one with no records.
    const earlier = createSessionStore(storage, options)
    const young = Array.from({ length: 20 }, (_, i) => `kyoung${i}`)
    for (const keyId of ['kdue1', 'kdue2']) await earlier.save(principal(keyId), withRecord(earlier, now - 23.5 * hour), now)
    for (const keyId of young) await earlier.save(principal(keyId), withRecord(earlier, now - hour), now)
    await earlier.save(principal('knone'), earlier.createSessionDoc(new Date(now).toISOString()), now)
    const reads: string[] = []
    const getItemRaw = storage.getItemRaw
    storage.getItemRaw = ((key: string, ...rest: []) => {
      if (key.startsWith('session:')) reads.push(key)
      return getItemRaw(key, ...rest)
    }) as typeof getItemRaw
    const sessions = createSessionStore(storage, options)
    const check = { sessions, mutex: createKeyedMutex() }
    const storedRecords = async (keyId: string) => JSON.parse(String(await getItemRaw(`session:${keyId}:default`))).idempotency.length
    // The first check after a start knows nothing, reads every document, and expires nothing yet.
    await checkStoredSessions(check, now)
    expect(reads.sort()).toEqual(['kdue1', 'kdue2', 'knone', ...young].map((keyId) => `session:${keyId}:default`).sort())
    expect(await storedRecords('kdue1')).toBe(1)
    // Meanwhile a session is written with a record due within the hour, and one is patched.
    await sessions.save(principal('kwritten'), withRecord(sessions, now - 23.5 * hour), now)
    sessions.patch(principal('kyoung0'), (doc) => ({ ...doc, event_seq: doc.event_seq + 1 }))
    // Another session's read evicts the written one from the cache (of one): a check reads storage.
    await sessions.load(principal('kyoung1'))
    reads.length = 0
    await checkStoredSessions(check, now + hour)
    expect(reads.sort()).toEqual(['kdue1', 'kdue2', 'kwritten', 'kyoung0'].map((keyId) => `session:${keyId}:default`).sort())
    for (const keyId of ['kdue1', 'kdue2', 'kwritten']) expect(await storedRecords(keyId)).toBe(0)
    for (const keyId of young) expect(await storedRecords(keyId)).toBe(1)
    // Those rewritten are known with no records; the rest come due a day after they were made.
    await sessions.load(principal('knone'))
    reads.length = 0
    await checkStoredSessions(check, now + 23 * hour + 1)
    expect(reads.sort()).toEqual(young.map((keyId) => `session:${keyId}:default`).sort())
    for (const keyId of young) expect(await storedRecords(keyId)).toBe(0)
    await storage.dispose()
  })

  it('rejects keys that could leave the storage area', async () => {
    const storage = await open()
    if (_name.startsWith('fs')) {
      for (const key of ['..:etc:passwd', 'a:..:b', 'a b', 'a:*', 'a:%2e%2e']) {
        await expect(storage.setItem(key, 'x'), key).rejects.toThrow()
      }
    }
    await storage.dispose()
  })
})

/** Memory storage whose reads answer, while `held`, only when `release` is called; counts the reads. */
function createGatedStorage() {
  const memory = memoryDriver()
  const gate = { held: false, reads: 0, waiting: [] as Array<() => void>, release() { this.held = false; for (const go of this.waiting.splice(0)) go() } }
  const gated = defineDriver(() => ({
    ...memory,
    name: 'gated',
    async getItemRaw(key: string) {
      gate.reads++
      // What a slow disk does: the bytes are those of the moment the read began.
      const value = await memory.getItemRaw!(key, {})
      if (gate.held) await new Promise<void>((resolve) => gate.waiting.push(resolve))
      return value
    },
  }))
  return { storage: createStorage({ driver: gated(undefined) }), gate }
}

/** The state letter of a process in /proc (Z: exited, not yet reaped), or undefined once it is gone. */
function readProcessState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

describe('doc store races', () => {
  it('never keeps a version read before a write that ended while the read was in flight', async () => {
    const { storage, gate } = createGatedStorage()
    await storage.setItem('d:x', { v: 1 })
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'd' })
    gate.held = true
    const reading = docs.read('x')
    await docs.write('x', { v: 2 })
    gate.release()
    // The read asked before the write: it may answer the older version, but must not keep it.
    expect(await reading).toEqual({ v: 1 })
    expect(docs.peek('x')).toEqual({ v: 2 })
    expect(await docs.read('x')).toEqual({ v: 2 })
  })

  it('shares one read of storage among concurrent readers of a document', async () => {
    const { storage, gate } = createGatedStorage()
    await storage.setItem('d:x', { v: 1 })
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'd' })
    gate.held = true
    const readers = [docs.read('x'), docs.read('x'), docs.read('x')]
    gate.release()
    expect(await Promise.all(readers)).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }])
    expect(gate.reads).toBe(1)
  })

  it('asks storage once for a document it does not hold, however often it is read before its first write', async () => {
    const { storage, gate } = createGatedStorage()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'd' })
    for (let i = 0; i < 5; i++) expect(await docs.read('x')).toBeNull()
    expect(gate.reads).toBe(1)
    await docs.write('x', { v: 1 })
    expect(await docs.read('x')).toEqual({ v: 1 })
    expect(gate.reads).toBe(1)
    // Deleted by this server or by another process (keys reset): storage is asked again.
    await docs.remove('x')
    expect(await docs.read('x')).toBeNull()
    expect(gate.reads).toBe(2)
    docs.forget('x')
    expect(await docs.read('x')).toBeNull()
    expect(gate.reads).toBe(3)
  })

  it('never takes a document for absent when it was written while the read that missed it was in flight', async () => {
    const { storage, gate } = createGatedStorage()
    // A cache of one: writing another document leaves only storage holding x.
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'd', cacheSize: 1 })
    gate.held = true
    const reading = docs.read('x')
    await docs.write('x', { v: 1 })
    gate.release()
    expect(await reading).toBeNull()
    await docs.write('y', { v: 2 })
    expect(await docs.read('x')).toEqual({ v: 1 })
  })

  it('keeps a bounded number of absent documents, asking storage again for the oldest', async () => {
    const { storage, gate } = createGatedStorage()
    const docs = createDocStore<{ v: number }>(storage, { prefix: 'd', cacheSize: 2 })
    for (const id of ['a', 'b', 'c', 'a']) await docs.read(id)
    expect(gate.reads).toBe(4)
  })

  it('loads the saved session, not the one a concurrent load read before the save', async () => {
    const { storage, gate } = createGatedStorage()
    const sessions = createSessionStore(storage, { initialBalances: { BTC: 2, USDT: 10_000 }, config: fixtureConfig, cacheSize: 1 })
    const [a, b] = ['ka', 'kb'].map((keyId) => ({ apiKey: '', keyId, sessionId: 'default' }))
    await sessions.save(a!, sessions.createSessionDoc('2026-11-22T10:00:00.000Z'))
    // Another session's save leaves only its own document in memory (a cache of one).
    await sessions.save(b!, sessions.createSessionDoc('2026-11-22T10:00:00.000Z'))
    gate.held = true
    const polling = sessions.load(a!)
    await sessions.save(a!, { ...sessions.createSessionDoc('2026-11-22T10:00:00.000Z'), event_seq: 7 })
    gate.release()
    await polling
    expect((await sessions.load(a!)).event_seq).toBe(7)
    await storage.dispose()
  })
})

describe('doc store failures', () => {
  it('wraps backend failures in StorageError and leaves the cache as the backend is', async () => {
    const memory = memoryDriver()
    const state = { fail: false }
    const flaky = defineDriver(() => ({
      ...memory,
      name: 'flaky',
      setItem(key: string, value: string) {
        if (state.fail) throw new Error('EIO: i/o error')
        return memory.setItem!(key, value, {})
      },
    }))
    const docs = createDocStore<{ v: number }>(createStorage({ driver: flaky(undefined) }), { prefix: 'd' })
    await docs.write('x', { v: 1 })
    state.fail = true
    await expect(docs.write('x', { v: 2 })).rejects.toBeInstanceOf(StorageError)
    state.fail = false
    expect(await docs.read('x')).toEqual({ v: 1 })
  })

  it('fails a batch read (sandbox logs) of a file it cannot read, rather than take it for one not stored', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    await storage.setItem('reqlog:b1', [{ n: 1 }])
    // A directory where a bucket file should be: EISDIR, as EACCES or EIO would be, is no absent bucket.
    await mkdir(join(dir, 'reqlog', 'b2'))
    await expect(storage.getItems(['reqlog:b1', 'reqlog:b2'])).rejects.toThrow(/EISDIR/)
    await storage.dispose()
  })

  it('refuses a data dir that is not a directory', async () => {
    const dir = await tempDir()
    const file = join(dir, 'plain-file')
    await writeFile(file, 'x')
    await expect(createSandboxStorage({ kind: 'fs', dataDir: file, owner: true })).rejects.toThrow(/not a writable directory/)
    await expect(createSandboxStorage({ kind: 'fs', dataDir: file })).rejects.toThrow(/not a writable directory/)
    // A tool (logs, keys reset) does not create a dir it was pointed at: a typo would read as empty.
    await expect(createSandboxStorage({ kind: 'fs', dataDir: join(dir, 'typo') })).rejects.toThrow(`no sandbox data dir at ${join(dir, 'typo')}`)
    await expect(createSandboxStorage({ kind: 'fs', dataDir: join(file, 'sub') })).rejects.toBeInstanceOf(StorageError)
  })

  it('removes stale temp files when the server opens the dir, and leaves them to it when a tool does', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.setItem('session:k:default', { ok: true })
    await storage.dispose()
    await writeFile(join(dir, 'session', 'k~default.123.abc.tmp'), '{"torn')
    // A tool (sandbox logs, keys reset) runs beside a live server, whose temp files are writes under way.
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    expect(await tool.getItem('session:k:default')).toEqual({ ok: true })
    expect((await readdir(join(dir, 'session'))).sort()).toEqual(['k~default', 'k~default.123.abc.tmp'])
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await readdir(join(dir, 'session'))).toEqual(['k~default'])
    expect(await reopened.getItem('session:k:default')).toEqual({ ok: true })
    await reopened.dispose()
  })

  it('lets one server at a time own a data dir, takes over the lock of a dead one, and lets tools in beside it', async () => {
    const dir = await tempDir()
    const first = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    const lock = JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8'))
    expect(lock).toMatchObject({ pid: process.pid, host: hostname() })
    const refused = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(StorageError)
    expect((refused as Error).message).toBe(`data dir ${dir} is in use by another sandbox server (pid ${process.pid}, since ${lock.started_at}); stop it, or give this one another data dir (--data-dir). If no server runs there, delete ${join(dir, 'server.lock')}`)
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    await first.setItem('session:k:default', { v: 1 })
    await first.dispose()
    expect(await readdir(dir)).not.toContain('server.lock')
    // Tools read the files, which the server's stop left complete.
    expect(await tool.getItem('session:k:default')).toEqual({ v: 1 })

    // A lock left by a process that is gone (kill -9) is taken over; one held on another host is not.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
    await writeFile(join(dir, 'server.lock'), JSON.stringify({ token: 't', pid: Number(dead.stdout), host: hostname(), started_at: 'then' }))
    const second = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8')).pid).toBe(process.pid)
    await second.dispose()
    // A container restarted after a crash runs its server under the same pid again.
    await writeFile(join(dir, 'server.lock'), JSON.stringify({ token: 'before-restart', pid: process.pid, host: hostname(), started_at: 'then' }))
    const third = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8')).token).not.toBe('before-restart')
    await third.dispose()
    await writeFile(join(dir, 'server.lock'), JSON.stringify({ token: 't', pid: Number(dead.stdout), host: 'build-agent-7', started_at: 'then' }))
    await expect(createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })).rejects.toThrow(`in use by another sandbox server (pid ${dead.stdout} on build-agent-7, since then)`)
  })

  it('a stopping server leaves a lock that is no longer its own (its lock deleted, another server started on the dir)', async () => {
    const dir = await tempDir()
    const first = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    const other = JSON.stringify({ token: 'other-server', pid: process.pid, host: hostname(), started_at: 'now' })
    await writeFile(join(dir, 'server.lock'), other)
    await first.dispose()
    expect(await readFile(join(dir, 'server.lock'), 'utf8')).toBe(other)
  })

  it.skipIf(process.platform !== 'linux')('takes over the lock of a server killed but not yet reaped (a zombie)', async () => {
    const dir = await tempDir()
    // The child exits after its parent has become `sleep`, which never reaps it: a zombie until
    // the parent ends.
    const parent = spawn('sh', ['-c', '(sleep 0.3) & echo $!; exec sleep 60'])
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk) => resolve(String(chunk).trim()))))
      // Polled: on a busy machine the child took longer than a fixed 800 ms to exit, and a lock
      // of a live process is rightly refused.
      await vi.waitFor(() => expect(readProcessState(zombie)).toBe('Z'), { timeout: 10_000, interval: 20 })
      expect(() => process.kill(zombie, 0)).not.toThrow()
      await writeFile(join(dir, 'server.lock'), JSON.stringify({ token: 'zombie', pid: zombie, host: hostname(), started_at: 'then' }))
      const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
      expect(JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8')).pid).toBe(process.pid)
      await storage.dispose()
    } finally {
      parent.kill()
    }
  })

  it.skipIf(process.platform !== 'linux')('takes over a lock whose pid now belongs to another process, or that was written before a reboot', async () => {
    const dir = await tempDir()
    const held = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    const mine = JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8'))
    await held.dispose()
    expect(mine.boot_id).toBe((await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim())
    expect(mine.pid_start).toEqual(expect.any(Number))
    // A live process that is not the lock's writer: its pid stands for one reused.
    const other = spawn('sleep', ['5'])
    try {
      const stat = await readFile(`/proc/${other.pid}/stat`, 'utf8')
      const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
      const lockOf = (fields: object) => writeFile(join(dir, 'server.lock'), JSON.stringify({ token: 't', pid: other.pid, host: hostname(), started_at: 'then', ...fields }))
      // Its own record, or one without the fields (an earlier version's): in use.
      for (const fields of [{ boot_id: mine.boot_id, pid_start: start }, {}]) {
        await lockOf(fields)
        await expect(createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })).rejects.toThrow(`in use by another sandbox server (pid ${other.pid}, since then)`)
      }
      // The pid started at another time, or the record is from another boot: gone.
      for (const fields of [{ boot_id: mine.boot_id, pid_start: start - 1 }, { boot_id: 'an-earlier-boot', pid_start: start }]) {
        await lockOf(fields)
        const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
        expect(JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8')).pid).toBe(process.pid)
        await storage.dispose()
      }
    } finally {
      other.kill()
    }
  })

  it('says a lock file that names no server is damaged, instead of blaming a server that does not run', async () => {
    const dir = await tempDir()
    for (const text of ['', 'not json', '{"pid":1}']) {
      await writeFile(join(dir, 'server.lock'), text)
      await expect(createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true }), text).rejects.toThrow(`data dir ${dir} has a lock file that names no server (damaged): if no sandbox server runs on this dir, delete ${join(dir, 'server.lock')}`)
    }
  })

  it('gives a dead server\'s data dir to one of two servers started over it at once', async () => {
    const dir = await tempDir()
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
    const staleLock = JSON.stringify({ token: 'dead', pid: Number(dead.stdout), host: hostname(), started_at: 'then' })
    for (let round = 0; round < 30; round++) {
      await writeFile(join(dir, 'server.lock'), staleLock)
      // A takeover cut short by a kill leaves its guard; it must not block the next start.
      if (round === 0) await writeFile(join(dir, 'server.lock.takeover'), staleLock)
      const opened = await Promise.allSettled([0, 1].map(() => createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })))
      const winners = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
      const refusals = opened.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
      expect(winners).toHaveLength(1)
      expect(refusals[0]).toBeInstanceOf(StorageError)
      expect((refusals[0] as Error).message).toContain(`is in use by another sandbox server (pid ${process.pid},`)
      await winners[0]!.dispose()
    }
    expect((await readdir(dir)).filter((name) => name.startsWith('server.lock'))).toEqual([])
  })

  it('keeps one directory per namespace: a key\'s other segments are one file name', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    await storage.setItem('session:k1:default', { a: 1 })
    await storage.setItem('idem:k1:default:3', { b: 2 })
    await storage.setItem('top', { c: 3 })
    expect((await readdir(dir)).sort()).toEqual(['idem', 'session', 'top'])
    expect(await readdir(join(dir, 'session'))).toEqual(['k1~default'])
    expect(await readdir(join(dir, 'idem'))).toEqual(['k1~default~3'])
    expect((await storage.getKeys('')).sort()).toEqual(['idem:k1:default:3', 'session:k1:default', 'top'])
    expect(await storage.getKeys('idem:k1')).toEqual(['idem:k1:default:3'])
  })

  it('moves a data dir of the earlier nested layout to flat files at start', async () => {
    const dir = await tempDir()
    // A key id as every version has made them (sha256 hex, 32 characters): only such dirs are moved.
    const k1 = 'c219d99a8dbf38a28c7d39728719e29e'
    await mkdir(join(dir, 'session', k1), { recursive: true })
    await mkdir(join(dir, 'idem', k1, 'default'), { recursive: true })
    await writeFile(join(dir, 'session', k1, 'default'), '{"v":1}')
    await writeFile(join(dir, 'idem', k1, 'default', '2'), '{"v":2}')
    await writeFile(join(dir, 'keys.json'), '{}')
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await storage.getItem(`session:${k1}:default`)).toEqual({ v: 1 })
    expect(await storage.getItem(`idem:${k1}:default:2`)).toEqual({ v: 2 })
    expect(await readdir(join(dir, 'session'))).toEqual([`${k1}~default`])
    expect(await readdir(join(dir, 'idem'))).toEqual([`${k1}~default~2`])
    expect(await readdir(dir)).toContain('keys.json')
    await storage.dispose()
  })
})

describe('parseStorageKind', () => {
  it('accepts fs, memory and redis URLs, and explains bad URLs and typos', () => {
    expect(parseStorageKind('fs')).toBe('fs')
    expect(parseStorageKind('MEMORY')).toBe('memory')
    expect(parseStorageKind('redis://127.0.0.1:6379')).toBe('redis')
    expect(parseStorageKind('rediss://:pw@cache.example:6380/3')).toBe('redis')
    expect(() => parseStorageKind('redis://127.0.0.1:6379/cache')).toThrow(/database number/)
    expect(() => parseStorageKind('redis://:s3cret@[::1')).toThrow(/not a redis URL/)
    expect(() => parseStorageKind('redis://:s3cret@[::1')).not.toThrow(/s3cret/)
    expect(() => parseStorageKind('sqlite')).toThrow(/use fs, memory or a redis:\/\/ URL/)
  })
})

describe('journaled fs storage', () => {
  it('acknowledges a write only once it is in the journal, then checkpoints it into its file', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.setItem('session:k1:default', { v: 1 })
    const journals = (await readdir(dir)).filter((name) => name.startsWith('journal-'))
    expect(journals).toHaveLength(1)
    expect(await storage.getItem('session:k1:default')).toEqual({ v: 1 })
    await storage.dispose()
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    expect(await reopened.getItem('session:k1:default')).toEqual({ v: 1 })
  })

  it('acknowledges writes without waiting for the disk, makes the journal durable apart from them, and before each checkpoint', async () => {
    const dir = await tempDir()
    // A disk that stalls: no fdatasync of the journal finishes until the test lets it.
    let release!: () => void
    const stalled = new Promise<void>((resolve) => (release = resolve))
    let syncs = 0
    const original = fs.fdatasync
    const spy = vi.spyOn(fs, 'fdatasync').mockImplementation((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      syncs++
      void stalled.then(() => original(fd, callback))
    })
    try {
      const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
      for (let i = 0; i < 20; i++) await storage.setItem(`session:k${i}:default`, { v: i })
      expect(await storage.getItem('session:k19:default')).toEqual({ v: 19 })
      // The periodic sync starts on its own, a second after the first write.
      await vi.waitFor(() => expect(syncs).toBe(1), { timeout: 3000, interval: 50 })
      // A checkpoint writes no file before the journal it comes from is on disk.
      const disposed = storage.dispose()
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(await readdir(join(dir, 'session')).catch(() => [])).toEqual([])
      release()
      await disposed
      expect((await readdir(join(dir, 'session'))).length).toBe(20)
      expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    } finally {
      release()
      spy.mockRestore()
    }
  })

  it('replays the journal a dead process left, ignoring a torn last record', async () => {
    const dir = await tempDir()
    const bytes = encodeRecords([
      { key: 'session:a:default', value: '{"v":1}' },
      { key: 'session:b:default', value: '{"v":2}' },
      { key: 'session:a:default', value: '{"v":3}' },
      { key: 'session:b:default', value: null },
      { key: 'session:c:default', value: '{"v":4}' },
    ], true)
    // pid 2^22+1 is above Linux's pid_max default: certainly not a running process.
    await writeFile(join(dir, 'journal-4194305-000001.log'), bytes.subarray(0, bytes.length - 3))
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await storage.getItem('session:a:default')).toEqual({ v: 3 })
    expect(await storage.getItem('session:b:default')).toBeNull()
    expect(await storage.getItem('session:c:default')).toBeNull()
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    await storage.dispose()
  })

  describe('refuses to start over a journal damaged before its end, and keeps it, instead of dropping the changes after the damage', () => {
    const bytes = encodeRecords([
      { key: 'session:a:default', value: '{"v":1}' },
      { key: 'session:b:default', value: '{"v":2}' },
      { key: 'session:a:default', value: '{"v":3}' },
    ], true)
    const damage = (text: string, from: string, to: string) => Buffer.from(text.replace(from, to), 'latin1')
    const text = bytes.toString('latin1')
    // As a bad sector, a stray write or a bad edit would leave it.
    it.each([
      ['a stray character in a length', damage(text, 'session:b:default 7 ', 'session:b:default 7x ')],
      // Alone, a length running past the end of the file would read as a write cut short.
      ['a length grown past the end of the file', damage(text, 'session:b:default 7 ', 'session:b:default 7000 ')],
      ['a value altered, its length unchanged', damage(text, '{"v":2}', '{"v":3}')],
      ['a journal of the previous format with a stray character in a length', Buffer.from('session:a:default 7\n{"v":1}\nsession:b:default 7x\n{"v":2}\n')],
    ])('%s', async (_name, damaged) => {
      const dir = await tempDir()
      const name = 'journal-4194305-000001.log'
      await writeFile(join(dir, name), damaged)
      const at = damaged.indexOf('session:b:default')
      await expect(createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })).rejects.toThrow(`${name} is damaged at byte ${at}, before its end`)
      expect(await readFile(join(dir, name))).toEqual(damaged)
      expect((await readdir(dir)).filter((file) => file.startsWith('session'))).toEqual([])
    })
  })

  it('replays a journal the previous version left, without format line or checksums, as it did', async () => {
    const dir = await tempDir()
    const old = 'session:a:default 7\n{"v":1}\nsession:b:default 10\n{"v":"ü"}\nsession:a:default -1\nsession:c:default 7\n{"v":'
    await writeFile(join(dir, 'journal-4194305-000001.log'), old)
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect([await storage.getItem('session:a:default'), await storage.getItem('session:b:default'), await storage.getItem('session:c:default')]).toEqual([null, { v: 'ü' }, null])
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    await storage.dispose()
  })

  it('starts every journal it writes with the format line, once', async () => {
    const dir = await tempDir()
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    await storage.setItem('session:a:default', { v: 1 })
    await storage.setItem('session:b:default', { v: 2 })
    const written = await readFile(join(dir, `journal-${process.pid}-000001.log`))
    expect(written.toString().startsWith('sandbox-journal v2\nsession:a:default ')).toBe(true)
    expect(decodeRecords(written)).toEqual({ records: [{ key: 'session:a:default', value: '{"v":1}' }, { key: 'session:b:default', value: '{"v":2}' }], complete: true })
    await storage.dispose()
  })

  it('skips a journal name already taken instead of appending to it, and leaves that journal as it is', async () => {
    const dir = await tempDir()
    // What a driver of this process left in a dir it then did not recover.
    const taken = join(dir, `journal-${process.pid}-000001.log`)
    const left = encodeRecords([{ key: 'session:x:default', value: '{"v":1}' }], true)
    await writeFile(taken, left)
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    await storage.setItem('session:a:default', { v: 1 })
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-')).sort()).toEqual([`journal-${process.pid}-000001.log`, `journal-${process.pid}-000002.log`])
    await storage.dispose()
    expect(await readFile(taken)).toEqual(left)
  })

  it('holds new writes while the backlog not yet checkpointed is over its limit, and checkpoints it first', async () => {
    const dir = await tempDir()
    // A checkpoint delay of a minute: only the limit can make these files appear during the test.
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000, maxPendingChars: 1000 }) })
    await storage.setItem('session:a:default', { pad: 'x'.repeat(600) })
    expect(await readdir(join(dir, 'session')).catch(() => [])).toEqual([])
    await storage.setItem('session:b:default', { pad: 'y'.repeat(600) })
    // Under the limit after a: b was not held, and nothing was checkpointed yet.
    expect(await readdir(join(dir, 'session')).catch(() => [])).toEqual([])
    await storage.setItem('session:c:default', { pad: 'z' })
    // Over the limit after b: c waited for a checkpoint of a and b.
    expect((await readdir(join(dir, 'session'))).sort()).toEqual(['a~default', 'b~default'])
    expect(await storage.getItem('session:c:default')).toEqual({ pad: 'z' })
    await storage.dispose()
  })

  it('acknowledges a write only once the journal took all of it: a short write on a filling disk is an error', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.setItem('session:a:default', { v: 1 })
    // The next journal write takes half its bytes and reports so, and the one after fails, as on
    // a disk that has just filled up.
    expect(await refuseOnFillingDisk(await tempDir(), () => storage.setItem('session:b:default', { v: 2 }))).toBe(2)
    await storage.setItem('session:c:default', { v: 3 })
    await storage.dispose()
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect([await reopened.getItem('session:a:default'), await reopened.getItem('session:b:default'), await reopened.getItem('session:c:default')]).toEqual([{ v: 1 }, null, { v: 3 }])
    await reopened.dispose()
  })

  it('after a short write it cannot cut back (truncate failing), puts later writes in a new journal that replays whole', async () => {
    const dir = await tempDir()
    // No checkpoint during the test: the journals stay as the writes left them.
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    await storage.setItem('session:a:default', { v: 1 })
    await refuseOnFillingDisk(await tempDir(), () => storage.setItem('session:b:default', { v: 2 }), { truncateFails: true })
    // Appended after the torn half of b, c would make the journal read as damaged at b.
    await storage.setItem('session:c:default', { v: 3 })
    const crashed = await tempDir()
    await cp(dir, crashed, { recursive: true })
    await storage.dispose()
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: crashed, owner: true })
    expect([await reopened.getItem('session:a:default'), await reopened.getItem('session:b:default'), await reopened.getItem('session:c:default')]).toEqual([{ v: 1 }, null, { v: 3 }])
    await reopened.dispose()
  })

  it('writes nothing into the data dir after a stop whose checkpoints failed: the next start replays the journal', async () => {
    const dir = await tempDir()
    // A directory where the document's file goes: every checkpoint of it fails, as on a full disk.
    await mkdir(join(dir, 'session', 'a~default'), { recursive: true })
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 5 }) })
    await storage.setItem('session:a:default', { v: 1 })
    await expect(storage.dispose()).rejects.toThrow(/the last checkpoint in .* could not be written \(.*EISDIR.*\): every acknowledged write is kept in its journal, which the next start replays/)
    // The cause is gone; a checkpoint retried now would write the file and delete the journal.
    await rm(join(dir, 'session', 'a~default'), { recursive: true })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await readdir(join(dir, 'session'))).toEqual([])
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-')).length).toBe(1)
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await reopened.getItem('session:a:default')).toEqual({ v: 1 })
    await reopened.dispose()
  })

  it('replays a journal named with its own pid, as a restarted container\'s server (pid 1 again) finds it', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, `journal-${process.pid}-000001.log`), encodeRecords([{ key: 'session:x:default', value: '{"v":1}' }], true))
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await storage.getItem('session:x:default')).toEqual({ v: 1 })
    await storage.setItem('session:y:default', { v: 2 })
    await storage.dispose()
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect([await reopened.getItem('session:x:default'), await reopened.getItem('session:y:default')]).toEqual([{ v: 1 }, { v: 2 }])
    await reopened.dispose()
  })

  it('replays the journals of two gone servers oldest first, whatever their pids', async () => {
    const dir = await tempDir()
    const older = join(dir, 'journal-900-000001.log')
    const newer = join(dir, 'journal-100-000001.log')
    await writeFile(older, encodeRecords([{ key: 'session:x:default', value: '{"v":"old"}' }], true))
    await writeFile(newer, encodeRecords([{ key: 'session:x:default', value: '{"v":"new"}' }], true))
    await utimes(older, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await storage.getItem('session:x:default')).toEqual({ v: 'new' })
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    await storage.dispose()
  })
})
