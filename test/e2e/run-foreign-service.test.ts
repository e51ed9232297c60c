import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// A CI job starts `sandbox serve &` on a port another service of the job already holds: serve
// exits 2 in the background, unseen, and the run then talks to that service. Every request gets
// its HTML page, a setup problem like a server that cannot be reached, not 18 failed checks.

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-foreign-service')
let foreign: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => foreign?.close(resolve) ?? resolve(undefined))
  foreign = undefined
})

async function startForeignService(status: number): Promise<string> {
  foreign = createServer((_request, response) => {
    response.writeHead(status, { 'content-type': 'text/html' })
    response.end('<h1>Not Found</h1>')
  })
  await new Promise<void>((resolve) => foreign!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(foreign!.address() as AddressInfo).port}`
}

describe('sandbox run against another service on the base URL\'s port', () => {
  it('stops at the first answer that is not the API\'s JSON: exit 2, one error, the other scenarios not run', { timeout: 60_000 }, async () => {
    const dir = await tempDir()
    const url = await startForeignService(404)
    const summary = join(dir, 'summary.md')
    const result = await runCli(['run', 'loan-flow', 'direct-loan', 'request-errors', '--base-url', url, '--junit', 'j.xml'], {
      cwd: dir,
      env: { CI: 'true', GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: summary },
    })
    const stop = `GET /api/sandbox/state answered 404 with text/html, not the sandbox API's JSON: is the base URL ${url} the root of a sandbox server (its path prefix included), not a web app or another service? A sandbox serve started for this run exits 2 when another process holds its port: its output says so`
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`sandbox: ${stop}`)
    expect(result.stderr).not.toContain('is the server running?')
    expect(result.stdout).toContain('0 passed, 1 failed, 2 skipped')
    expect(result.stdout).toContain('- direct-loan skipped: not run: the run stopped when loan-flow could not reach the server')
    // One GitHub annotation for the stop, not one per scenario as for failed checks.
    expect(result.stdout.match(/^::error /gm)).toHaveLength(1)

    // A CI's test report shows one error (setup), no failures of the API under test.
    const junit = new XMLParser({ ignoreAttributes: false }).parse(await readFile(join(dir, 'j.xml'), 'utf8'))
    const suite = junit.testsuites.testsuite
    expect(suite).toMatchObject({ '@_tests': '3', '@_failures': '0', '@_errors': '1', '@_skipped': '2' })
    expect(suite.testcase[0].error).toMatchObject({ '@_type': 'ConnectionError' })
  })

  it('the same for a web app that answers 200 with its page to every path', { timeout: 60_000 }, async () => {
    const dir = await tempDir()
    const url = await startForeignService(200)
    const result = await runCli(['run', 'direct-loan', 'partner-profile', '--base-url', url, '--json'], { cwd: dir, env: { CI: 'true', GITHUB_ACTIONS: '' } })
    expect(result.code).toBe(2)
    const report = JSON.parse(result.stdout)
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true })
    expect(report.scenarios[0].error).toMatch(/^POST \/api\/sandbox\/loans answered 200 with text\/html, not the sandbox API's JSON: /)
    expect(report.scenarios[1]).toMatchObject({ status: 'skipped' })
  })
})
