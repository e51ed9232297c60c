import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { createTestApi, LOAN } from '../helpers/api.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// Documents a newer sandbox wrote, in a data dir this version opens: refused, never rewritten.

const tempDir = useTempDirs('sandbox-newer-docs')

describe('a session document of a newer version', () => {
  it('is answered with 500 and a log line that says so, and is never written over', async () => {
    const dataDir = await tempDir()
    const first = await createTestApi({ storage: 'fs', dataDir })
    expect((await first.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await first.sandbox.close()
    const [name] = await readdir(join(dataDir, 'session'))
    const path = join(dataDir, 'session', name!)
    const newer = JSON.stringify({ ...JSON.parse(await readFile(path, 'utf8')), version: 2, added_later: { x: 1 } })
    await writeFile(path, newer)

    const logged: string[] = []
    const api = await createTestApi({ storage: 'fs', dataDir, logError: (error) => logged.push((error as Error).message) })
    try {
      const read = await api.get('/api/sandbox/loans', first.key)
      expect(read.status).toBe(500)
      expect(read.body.error_code).toBe('SANDBOX_API_KEY_DATABASE_REQUIRED')
      // Without the check, this version read it by its own rules and wrote it back, still marked 2.
      expect((await api.post('/api/sandbox/loans', LOAN, { key: first.key })).status).toBe(500)
      expect(logged.at(-1)).toMatch(/^stored document session:\w+:default was written by a newer sandbox \(session document version 2\); this is partner-sandbox \S+, which reads version 1\. It is left as it is/)
      await api.sandbox.flush()
    } finally {
      await api.sandbox.close()
    }
    expect(await readFile(path, 'utf8')).toBe(newer)
  })
})

describe('a forward secret of a newer version', () => {
  it('fails the start instead of being replaced, and the data dir is free again', async () => {
    const dataDir = await tempDir()
    await (await createSandbox({ storage: 'fs', dataDir })).close()
    const stored = '{"secret":"whsec_c2VjcmV0IG9mIGEgbmV3ZXIgdmVyc2lvbg","rotated_at":"2027-01-01T00:00:00Z"}'
    await mkdir(join(dataDir, 'webhooks'), { recursive: true })
    await writeFile(join(dataDir, 'webhooks', 'forward-secret'), stored)
    const error = await createSandbox({ storage: 'fs', dataDir, webhookForwardTo: 'http://127.0.0.1:9/hook' }).catch((caught: unknown) => caught)
    expect((error as Error).name).toBe('StorageError')
    expect((error as Error).message).toContain('the stored --webhook-forward-to secret is not one this version reads')
    expect(await readFile(join(dataDir, 'webhooks', 'forward-secret'), 'utf8')).toBe(stored)
    // Its lock was given back: a server without --webhook-forward-to starts on the same dir.
    await (await createSandbox({ storage: 'fs', dataDir })).close()
  })
})
