import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')
const JEST_DIR = join(ROOT, 'test/jest-consumer')

// Jest runs test files in its own module loader, which on Node 20 cannot require an ES module:
// the client and webhook entries need a CommonJS build for a partner's Jest suite to load them.
describe('a partner\'s Jest suite (CommonJS test files)', () => {
  const jest = join(JEST_DIR, 'node_modules/jest/bin/jest.js')
  const dirs: string[] = []
  /** A partner's project: FILES (else the suite folder's), and the package installed by its name. */
  const makeProject = async (files?: Record<string, string>) => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-jest-consumer-'))
    dirs.push(dir)
    if (files) for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
    else await cp(join(JEST_DIR, 'suite'), dir, { recursive: true })
    await mkdir(join(dir, 'node_modules'))
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    return dir
  }
  // Runs Jest in DIR; its JSON report says which files passed.
  const runJest = async (dir: string, args: string[], env: Record<string, string> = {}) => {
    // Exit 0 too: a globalTeardown that throws leaves every test passed, and Jest exits 1.
    const { code, stdout, stderr } = await promisify(execFile)(process.execPath, [jest, '--ci', '--json', ...args], { cwd: dir, env: { ...process.env, ...env } })
      .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (error: { code: number; stdout: string; stderr: string }) => error)
    const report = JSON.parse(stdout || '{}')
    const files = (report.testResults ?? []).map((file: { name: string; status: string; message: string }) => [file.name.slice(dir.length + 1), file.status, file.message]).sort()
    return { code, files, passed: report.numPassedTests, failure: stderr }
  }

  beforeAll(() => {
    expect(existsSync(jest), 'run npm test (pretest installs test/jest-consumer)').toBe(true)
  })
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

  it('walks a loan with partner-sandbox/client and verifies a delivery with partner-sandbox/webhooks, the server started in globalSetup', async () => {
    const { code, files, passed, failure } = await runJest(await makeProject(), ['--config', 'jest.config.cjs'])
    expect(code, failure).toBe(0)
    expect(files, failure).toEqual([
      ['loan-flow.test.cjs', 'passed', ''],
      ['webhooks.test.cjs', 'passed', ''],
    ])
    expect(passed).toBe(4)
  }, 60_000)

  it('on ES modules (--experimental-vm-modules), a test file imports the root and runs a sandbox of its own', async () => {
    const { code, files, passed, failure } = await runJest(await makeProject(), ['--config', 'jest.esm.config.mjs'], { NODE_OPTIONS: '--experimental-vm-modules' })
    expect(code, failure).toBe(0)
    expect(files, failure).toEqual([['in-process.test.mjs', 'passed', '']])
    expect(passed).toBe(1)
  }, 60_000)

  it('the README\'s Jest setup works as pasted, each file from the line that names it', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('#### In a Jest suite'))
    const block = /```js\n([\s\S]*?)\n```/.exec(section)![1]!
    const parts = block.split(/^\/\/ (\S+\.(?:js|mjs|cjs))\n/m).slice(1)
    const files = Object.fromEntries(Array.from({ length: parts.length / 2 }, (_, i) => [parts[2 * i]!, parts[2 * i + 1]!]))
    expect(Object.keys(files)).toEqual(['jest.config.js', 'sandbox-setup.mjs', 'sandbox-teardown.mjs', 'loan.test.js'])
    const { code, files: results, passed, failure } = await runJest(await makeProject(files), [])
    expect(code, failure).toBe(0)
    expect(results, failure).toEqual([['loan.test.js', 'passed', '']])
    expect(passed).toBe(1)
  }, 60_000)
})
