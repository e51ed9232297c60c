import { readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestApi, LOAN } from '../helpers/api.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * A key's session file damaged (a bad disk, a hand edit that broke it): what the partner's client
 * and the server log say, and that doing what they say brings the key back.
 */
const tempDir = useTempDirs('sandbox-damaged-doc')

describe('a damaged session document on fs', () => {
  it('answers 500 without advising a retry that cannot help, and the log names its file and how to recover', async () => {
    const dataDir = await tempDir()
    const first = await createTestApi({ storage: 'fs', dataDir })
    expect((await first.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await first.sandbox.close()
    const [name] = await readdir(join(dataDir, 'session'))
    const [keyId, sessionId] = name!.split('~')

    for (const damage of ['{"version":1,"book":', '{"version":1}']) {
      await writeFile(join(dataDir, 'session', name!), damage)
      const logged: string[] = []
      const api = await createTestApi({ storage: 'fs', dataDir, logError: (error) => logged.push((error as Error).message) })
      try {
        const answer = await api.get('/api/sandbox/loans', first.key)
        expect([answer.status, answer.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
        expect(answer.body.error).not.toMatch(/retry/)
        expect(answer.body.error).toMatch(/stored state of this key cannot be used .*the server log says which document and what to do/)
        expect(logged.at(-1)).toContain(`restore it, or delete it (session/${keyId}~${sessionId} in the data dir, sandbox:session:${keyId}:${sessionId} in redis) to start that key's session again from an empty state`)
      } finally {
        await api.sandbox.close()
      }
    }

    await rm(join(dataDir, 'session', name!))
    const fresh = await createTestApi({ storage: 'fs', dataDir })
    try {
      const answer = await fresh.get('/api/sandbox/loans', first.key)
      expect([answer.status, answer.body.activeLoans]).toEqual([200, []])
    } finally {
      await fresh.sandbox.close()
    }
  })
})
