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
