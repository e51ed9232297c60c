import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-foreign-files')
const KEY_ID = 'c219d99a8dbf38a28c7d39728719e29e'

/** Every file under DIR, relative to it, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1)).sort()
}

/** A project directory, as `--data-dir .` would give it to the sandbox by mistake. */
async function makeProject(): Promise<string> {
  const dir = await tempDir()
  const files: Record<string, string> = {
    'draft.tmp': 'an editor\'s',
    'build/cache.tmp': 'a build tool\'s',
    'webhooks/handlers/loan-issued.ts': 'export const handle = () => {}',
    'webhooks/handlers/deep/retry.ts': 'export {}',
    'session/notes/today.md': '# notes',
    // The sandbox's own leftovers: a crash's temp files and a data dir of the nested layout.
    [`session/${KEY_ID}~default.123.abc.tmp`]: '{"torn',
    [`session/${KEY_ID}/default`]: '{"version":1}',
    'server.lock.0b8e4f0e-3c1a-4a6e-9d2f-5c7b8a9e1f20.tmp': '{}',
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  return dir
}

const PROJECT_FILES = ['build/cache.tmp', 'draft.tmp', 'session/notes/today.md', 'webhooks/handlers/deep/retry.ts', 'webhooks/handlers/loan-issued.ts']

describe('a data dir that holds files the sandbox did not write (--data-dir . by mistake)', () => {
  it('is tidied of the sandbox\'s own temp files and nested layout only, when serve opens it', async () => {
    const dir = await makeProject()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.dispose()
    const files = await listFiles(dir)
    expect(files).toEqual(expect.arrayContaining([...PROJECT_FILES, `session/${KEY_ID}~default`]))
    expect(files.filter((path) => path.endsWith('.tmp'))).toEqual(['build/cache.tmp', 'draft.tmp'])
  })

  it('takes no file for a journal that journalName did not name', async () => {
    const dir = await makeProject()
    await writeFile(join(dir, 'journal-notes.log'), 'what happened today\n')
    await writeFile(join(dir, 'journal-empty.log'), '')
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.dispose()
    expect(await listFiles(dir)).toEqual(expect.arrayContaining(['journal-empty.log', 'journal-notes.log']))
  })

  it('keeps its directories in place when a tool (sandbox logs, keys reset) opens it', async () => {
    const dir = await makeProject()
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    await tool.dispose()
    expect(await listFiles(dir)).toEqual(expect.arrayContaining([...PROJECT_FILES, `session/${KEY_ID}~default`]))
  })
})
