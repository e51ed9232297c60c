import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-newer-data-e2e')

const NEWER = '{"format":2,"written_by":"partner-sandbox 0.4.0"}'

describe('data written by a newer sandbox', () => {
  it('serve, logs and keys reset refuse it with exit 2, saying so, and change nothing', async () => {
    const dir = await tempDir()
    const dataDir = join(dir, 'data')
    const keysFile = join(dir, 'keys.json')
    const created = await runCli(['keys', 'create', '--keys', keysFile])
    expect(created.code).toBe(0)
    await mkdir(join(dataDir, 'session'), { recursive: true })
    await writeFile(join(dataDir, 'storage-format'), NEWER)
    await writeFile(join(dataDir, 'journal-4242-000001.log'), 'sandbox-journal v3\n')
    const keysBefore = await readFile(keysFile, 'utf8')
    const listing = (await readdir(dataDir, { recursive: true })).sort()

    const expected = `sandbox: data dir ${dataDir} was written by a newer sandbox (storage format 2, by partner-sandbox 0.4.0); this is partner-sandbox `
    for (const args of [
      ['serve', '--port', '0', '--data-dir', dataDir],
      ['logs', '--data-dir', dataDir],
      ['keys', 'reset', created.stdout.trim(), '--keys', keysFile, '--data-dir', dataDir],
    ]) {
      const { code, stdout, stderr } = await runCli(args)
      expect(code, args[0]).toBe(2)
      expect(stderr, args[0]).toContain(expected)
      expect(stderr, args[0]).toContain('Nothing was read or changed: use that newer version again, or give this one another data dir (--data-dir)')
      expect(stderr, args[0]).not.toMatch(/\n\s+at /)
      expect(stdout, args[0]).not.toContain('ready')
    }
    expect(await readFile(keysFile, 'utf8')).toBe(keysBefore)
    expect((await readdir(dataDir, { recursive: true })).sort()).toEqual(listing)
  })
})
