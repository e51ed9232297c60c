import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { BIN, killAll, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-junit-interrupted')

/** A server whose loan-flow answers take 1.5 s: a run is sure to be inside loan-flow when stopped. */
async function startSlowServer(dir: string) {
  const faults = join(dir, 'faults.json')
  await writeFile(faults, JSON.stringify({ rules: [{ method: 'POST', path: '/api/sandbox/loans/flow', fault: 'latency', ms: 1500 }] }))
  return startServe(['--port', '0', '--storage', 'memory', '--faults', faults])
}

describe('sandbox run --junit stopped by a signal', () => {
  it.each([['SIGTERM', []], ['SIGINT', ['--json']], ['SIGHUP', []], ['SIGHUP', ['--json']]] as const)('%s (a cancelled CI job) still writes the report: the scenarios that ended, the one running as Interrupted, the rest skipped', async (signal, extra) => {
    const dir = await tempDir()
    const server = await startSlowServer(dir)
    const junit = join(dir, 'reports', 'junit.xml')
    const run = spawn(process.execPath, [BIN, 'run', 'direct-loan', 'loan-flow', 'repay-full', '--base-url', server.url, '--junit', junit, ...extra], { env: { ...process.env, NO_COLOR: '1' } })
    let output = ''
    run.stdout.on('data', (chunk) => { output += chunk })
    run.stderr.on('data', (chunk) => { output += chunk })
    const exited = new Promise((resolve) => run.once('exit', (code, how) => resolve(how ?? code)))
    try {
      // Inside loan-flow: the server answered the step after the one starting the transfer, which
      // the run sent only once it had that one's answer.
      await waitUntil(() => server.output().match(/POST \/api\/sandbox\/loans\/flow 200/g)?.length === 2, 20_000, 'loan-flow\'s second 200')
      run.kill(signal)
      expect(await exited).toBe(signal)
    } finally {
      if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL')
    }
    expect(output).toContain(`sandbox: stopped by ${signal}: the JUnit report in ${junit} holds the 1 scenario that ended and loan-flow, interrupted`)
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    const suite = xml.testsuites.testsuite
    expect(suite).toMatchObject({ tests: '3', failures: '0', errors: '1', skipped: '1' })
    const [ended, running, notRun] = suite.testcase
    expect(ended).toMatchObject({ classname: 'scenarios.direct-loan' })
    expect(ended.failure).toBeUndefined()
    expect(running).toMatchObject({ classname: 'scenarios.loan-flow', error: { type: 'Interrupted', message: `interrupted by ${signal} during this scenario` } })
    expect(running['system-out']).toMatch(/ok +\d+\. POST \/api\/sandbox\/loans\/flow 200 \d+ms \(start the collateral transfer\)/)
    expect(notRun).toMatchObject({ classname: 'scenarios.repay-full', skipped: { message: `not run: the run was stopped by ${signal}` } })
    if (extra.length > 0) expect(JSON.parse(output.slice(output.indexOf('{')).split('\nsandbox:')[0]!)).toMatchObject({ error: { code: 'INTERRUPTED' } })
  })
})
