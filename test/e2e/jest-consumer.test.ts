import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')
const JEST_DIR = join(ROOT, 'test/jest-consumer')

// Jest runs test files in its own module loader, which on Node 20 cannot require an ES module:
// the client and webhook entries need a CommonJS build for a partner's Jest suite to load them.
describe('a partner\'s Jest suite (CommonJS test files)', () => {
  it('walks a loan with partner-sandbox/client and verifies a delivery with partner-sandbox/webhooks, the server started in globalSetup', async () => {
    const jest = join(JEST_DIR, 'node_modules/jest/bin/jest.js')
    expect(existsSync(jest), 'run npm test (pretest installs test/jest-consumer)').toBe(true)
    // The suite as a partner's project holds it, the package installed by its name.
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-jest-consumer-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await cp(join(JEST_DIR, 'suite'), dir, { recursive: true })
    await mkdir(join(dir, 'node_modules'))
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    const { stdout } = await promisify(execFile)(process.execPath, [jest, '--ci', '--json', '--config', 'jest.config.cjs'], { cwd: dir })
      .catch((error: { stdout: string; stderr: string }) => ({ stdout: error.stdout || JSON.stringify({ failure: error.stderr }) }))
    const report = JSON.parse(stdout)
    const results = (report.testResults ?? []).map((file: { name: string; status: string; message: string }) => [file.name.slice(dir.length + 1), file.status, file.message]).sort()
    expect(results, report.failure).toEqual([
      ['loan-flow.test.cjs', 'passed', ''],
      ['webhooks.test.cjs', 'passed', ''],
    ].sort())
    expect(report.numPassedTests).toBe(4)
  }, 60_000)
})
