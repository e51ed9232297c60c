import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { Redis } from 'ioredis'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage, recoverJournals, StorageError } from '../../src/storage/index.js'
import { STORAGE_FORMAT } from '../../src/storage/storage-format.js'
import { createRequestLog } from '../../src/server/request-log.js'
import { readRequestLog } from '../../src/server/read-request-log.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// Data as a newer sandbox would leave it, opened by this one: refused with a message that says
// so, and left exactly as it was (nothing replayed, moved, tidied or overwritten).

const tempDir = useTempDirs('sandbox-newer-format')
const testRedis = useTestRedis()

/** Every file under `dir` with its content, to compare before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[relative(dir, join(entry.parentPath, entry.name))] = await readFile(join(entry.parentPath, entry.name), 'utf8')
  }
  return files
}

/** A data dir a newer version wrote: its marker, a journal, a crash's temp file, a nested dir. */
async function makeNewerDataDir(marker: string): Promise<string> {
  const dir = await tempDir()
  await writeFile(join(dir, 'storage-format'), marker)
  await writeFile(join(dir, 'journal-4242-000001.log'), 'sandbox-journal v3\nrecords of its own\n')
  await mkdir(join(dir, 'session', 'k1'), { recursive: true })
  await writeFile(join(dir, 'session', 'k1', 'default'), '{"version":2}')
  await writeFile(join(dir, 'session', 'k2~default.123.abc.tmp'), 'half')
  return dir
}

describe('a data dir marked with a newer storage format', () => {
  it('is refused by serve and by the tools, naming both versions, and left untouched', async () => {
    const dir = await makeNewerDataDir('{"format":2,"written_by":"partner-sandbox 0.4.0"}')
    const before = await snapshot(dir)
    for (const owner of [true, false]) {
      const error = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StorageError)
      expect((error as Error).message).toMatch(new RegExp(`^data dir .+ was written by a newer sandbox \\(storage format 2, by partner-sandbox 0\\.4\\.0\\); this is partner-sandbox \\S+, which reads format ${STORAGE_FORMAT}\\. Nothing was read or changed: use that newer version again, or give this one another data dir \\(--data-dir\\)$`))
    }
    // No lock taken, no temp file deleted, no nested dir flattened, no journal replayed.
    expect(await snapshot(dir)).toEqual(before)
  })

  it('is refused when its marker cannot be read, rather than taken for format 1', async () => {
    const dir = await makeNewerDataDir('format=2')
    const before = await snapshot(dir)
    const error = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true }).catch((caught: unknown) => caught)
    expect((error as Error).message).toContain('has a storage-format marker this version cannot read ("format=2")')
    expect((error as Error).message).toContain('delete the marker (storage-format)')
    expect(await snapshot(dir)).toEqual(before)
  })

  it('is marked with this format by the server when it has no marker (a dir of an earlier version), not by a tool', async () => {
    const dir = await tempDir()
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    await tool.dispose()
    expect(await readdir(dir)).toEqual([])
    const owned = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await owned.dispose()
    expect(JSON.parse(await readFile(join(dir, 'storage-format'), 'utf8'))).toEqual({ format: STORAGE_FORMAT, written_by: expect.stringMatching(/^partner-sandbox \S+$/) })
    // ... and opens again as its own.
    await (await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })).dispose()
  })
})

describe('a journal in a newer format', () => {
  it('stops the replay with a message that says so, and is kept', async () => {
    const dir = await tempDir()
    const journal = join(dir, 'journal-4242-000001.log')
    await writeFile(journal, 'sandbox-journal v3\nrecords of its own\n')
    const error = await recoverJournals(dir).catch((caught: unknown) => caught)
    expect((error as Error).message).toMatch(/^journal-4242-000001\.log is a journal in a newer sandbox's format \("sandbox-journal v3"\); this is partner-sandbox \S+, which reads "sandbox-journal v2" and the format before it\. Nothing was replayed and the journal is kept/)
    expect((error as Error).message).not.toContain('damaged')
    expect(await readFile(journal, 'utf8')).toBe('sandbox-journal v3\nrecords of its own\n')
  })

  it('is not confused with a format line of this version cut short by a crash', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'journal-4242-000001.log'), 'sandbox-journal v')
    expect(await recoverJournals(dir)).toBe(0)
    expect(await readdir(dir)).toEqual([])
  })
})

describe('a directory of a namespace this version does not know', () => {
  it('is left where it is, not moved to the flat layout', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'blobs', 'k1'), { recursive: true })
    await writeFile(join(dir, 'blobs', 'k1', 'a'), 'newer')
    await (await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })).dispose()
    expect(await readFile(join(dir, 'blobs', 'k1', 'a'), 'utf8')).toBe('newer')
  })
})

describe('request log keys of another version', () => {
  it('are neither rolled off nor read as buckets of this one', async () => {
    const storage = createStorage({ driver: memoryDriver() })
    await storage.setItem('reqlog:v2:000001', { entries: 'in a newer shape' })
    const log = createRequestLog(storage, { limit: 1 })
    const entry = { request_id: 'req_1', at: new Date().toISOString(), key: null, method: 'GET', path: '/', status: 404, error_code: 'NOT_FOUND', idempotency_key: null, duration_ms: 1 }
    for (let i = 0; i < 3; i++) {
      log.record('k1', entry)
      await log.flush()
    }
    await log.close()
    expect(await storage.getItem('reqlog:v2:000001')).toEqual({ entries: 'in a newer shape' })
    expect(await readRequestLog(storage)).toEqual([entry])
  })
})

/** Runs `use` on the file's test redis, emptied first, with a raw client on it that is closed after. */
async function withFlushedRedis(use: (redis: Awaited<ReturnType<typeof testRedis>>, raw: Redis) => Promise<void>): Promise<void> {
  const redis = await testRedis()
  await redis.flush()
  const raw = new Redis(redis.port, '127.0.0.1')
  try {
    await use(redis, raw)
  } finally {
    await raw.quit()
  }
}

describe('a redis database marked with a newer storage format', () => {
  it.skipIf(!hasRedis)('is refused by the server and the tools and left untouched; an unmarked one is marked by the server only', async () => {
    await withFlushedRedis(async (redis, raw) => {
      const tool = await createSandboxStorage({ kind: 'redis', url: redis.url })
      await tool.dispose()
      expect(await raw.keys('*')).toEqual([])
      const owned = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true })
      await owned.dispose()
      expect(JSON.parse((await raw.get('sandbox:storage-format'))!)).toMatchObject({ format: STORAGE_FORMAT })

      await raw.set('sandbox:storage-format', '{"format":3}')
      await raw.set('sandbox:session:k1:default', '{"version":3}')
      const before = (await raw.keys('*')).sort()
      for (const owner of [true, false]) {
        const error = await createSandboxStorage({ kind: 'redis', url: redis.url, owner }).catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(StorageError)
        expect((error as Error).message).toMatch(/^redis database redis:\/\/127\.0\.0\.1:\d+\/0 was written by a newer sandbox \(storage format 3\); .+ another database \(--storage redis:\/\/HOST:PORT\/DB\)$/)
      }
      // No lease taken: nothing written.
      expect((await raw.keys('*')).sort()).toEqual(before)
      expect(await raw.get('sandbox:storage-format')).toBe('{"format":3}')
    })
  })
})

describe('a redis database whose storage-format marker cannot be read', () => {
  it.skipIf(!hasRedis)('is refused with the redis key to delete, which is left as it was', async () => {
    await withFlushedRedis(async (redis, raw) => {
      await raw.set('sandbox:storage-format', 'format=2')
      const error = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StorageError)
      // The key as redis names it: `DEL storage-format` would delete nothing.
      expect((error as Error).message).toContain('delete the marker (sandbox:storage-format)')
      expect(await raw.get('sandbox:storage-format')).toBe('format=2')
    })
  })
})
