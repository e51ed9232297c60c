import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')

// node --test runs each file in a process of its own, several at once: the README's example, one
// sandbox per file on port 0, must pass twice in parallel under one key, and the runner must end
// by itself (a sandbox left open would keep it waiting: node:test has no timeout of its own).
describe('the README\'s node:test example', () => {
  const dirs: string[] = []
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

  it('passes as pasted, twice at once under one key, and the runner exits by itself', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('#### With node:test or mocha'))
    const block = /```js\n([\s\S]*?)\n```/.exec(section)![1]!
    expect(block.split('\n')[0]).toMatch(/^\/\/ test\/loan\.test\.mjs/)
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-node-test-consumer-'))
    dirs.push(dir)
    await mkdir(join(dir, 'node_modules'))
    await mkdir(join(dir, 'test'))
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    for (const name of ['loan.test.mjs', 'other-loan.test.mjs']) await writeFile(join(dir, 'test', name), block)
    // The hang bound: a sandbox left open would hold the run until this kills it.
    const result = await new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) => {
      execFile(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=tap', 'test/'], { cwd: dir, timeout: 60_000 }, (error, stdout, stderr) => {
        const failed = error as (Error & { code?: number; signal?: string }) | null
        resolve({ code: failed ? failed.code ?? null : 0, signal: failed?.signal ?? null, output: `${stdout}${stderr}` })
      })
    })
    expect(result.signal, result.output).toBeNull()
    expect(result.code, result.output).toBe(0)
    expect(result.output).toMatch(/^# pass 4$/m)
  }, 90_000)
})
