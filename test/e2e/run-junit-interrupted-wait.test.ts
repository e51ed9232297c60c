import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// A CI job's timeout (`timeout 5m`, GitLab's job timeout) stops a `run --wait` whose server never
// came up. Its JUnit report is what the CI's test page shows: all skipped and no error read as a
// job with nothing wrong in its tests, though the server it waited for never answered.

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-junit-interrupted-wait')
let proxy: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => proxy?.close(resolve) ?? resolve(undefined))
  proxy = undefined
})

/** A proxy whose server behind it is not up: 503 pages, which --wait waits through. */
async function startDownProxy(): Promise<{ url: string; asked: () => number }> {
  let asked = 0
  proxy = createServer((_request, response) => {
    asked++
    response.writeHead(503, { 'content-type': 'text/html' })
    response.end('<html><body>503 Service Unavailable</body></html>')
  })
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(proxy!.address() as AddressInfo).port}`, asked: () => asked }
}

describe('sandbox run --wait --junit stopped by a signal while it waits for the server', () => {
  it('reports the first scenario as an Interrupted error saying the server had not answered, not every scenario skipped', { timeout: 60_000 }, async () => {
    const dir = await tempDir()
    const down = await startDownProxy()
    const junit = join(dir, 'junit.xml')
    const run = spawn(process.execPath, [BIN, 'run', 'direct-loan', 'loan-flow', '--base-url', down.url, '--wait', '5m', '--junit', junit], { env: { ...process.env, NO_COLOR: '1', CI: 'true' } })
    let output = ''
    run.stdout.on('data', (chunk) => { output += chunk })
    run.stderr.on('data', (chunk) => { output += chunk })
    const exited = new Promise((resolve) => run.once('exit', (code, how) => resolve(how ?? code)))
    try {
      await waitUntil(() => down.asked() >= 2, 20_000, 'the run polling the server')
      run.kill('SIGTERM')
      expect(await exited).toBe('SIGTERM')
    } finally {
      if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL')
    }
    const waiting = `interrupted by SIGTERM while waiting for ${down.url} to answer (--wait 5m): it had not answered`
    expect(output).toContain(`sandbox: stopped by SIGTERM: the JUnit report in ${junit} holds the 0 scenarios that ended and direct-loan, ${waiting}`)
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    const suite = xml.testsuites.testsuite
    expect(suite).toMatchObject({ tests: '2', failures: '0', errors: '1', skipped: '1' })
    const [first, notRun] = suite.testcase
    expect(first).toMatchObject({ classname: 'scenarios.direct-loan', error: { type: 'Interrupted', message: waiting } })
    expect(notRun).toMatchObject({ classname: 'scenarios.loan-flow', skipped: { message: 'not run: the run was stopped by SIGTERM' } })
  })
})
