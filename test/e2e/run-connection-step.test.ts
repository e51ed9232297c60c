import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-connection-step')

// GET state answers after 2 s, so each 0.5 s attempt of step 2 times out while step 1 was answered.
const FAULTS = JSON.stringify({ rules: [{ method: 'GET', path: '/api/sandbox/state', fault: 'latency', ms: 2000 }] })
const config = { name: 'config', request: { method: 'GET', path: '/api/sandbox/config' } }
const SLOW_STATE = JSON.stringify({
  name: 'Slow state',
  description: 'the server answers step 1, then not step 2 in time',
  steps: [config, { name: 'slow state', request: { method: 'GET', path: '/api/sandbox/state' } }, { ...config, name: 'config again' }],
})
const NOTE = '4 attempts, timed out (no answer within 0.5 s) each time; waited 100 ms, 200 ms and 400 ms between them'
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('sandbox run: a server that stops answering after the first step', () => {
  it('names the step it stopped at, with its retries, in every report, and gives no "is the server running?" hint', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'faults.json'), FAULTS)
    await writeFile(join(dir, 'slow-state.json'), SLOW_STATE)
    const server = await startServe(['--port', '0', '--storage', 'memory', '--faults', join(dir, 'faults.json')])
    const summary = join(dir, 'summary.md')
    const args = ['run', 'slow-state.json', '--base-url', server.url, '--timeout', '500ms']
    const github = { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: summary }
    const [human, json] = await Promise.all([
      runCli(args, { cwd: dir, env: { GITHUB_ACTIONS: '' } }),
      runCli([...args, '--json', '--junit', 'j.xml'], { cwd: dir, env: github }),
    ])
    await server.stop()
    const unreachable = `cannot reach ${server.url}/api/sandbox/state (timed out after 4 attempts of 0.5 s each)`
    const stop = `step 2 (slow state): ${unreachable}; the server answered earlier steps of this run, then not this one in time: it may be stuck or overloaded (its log says), or this request needs a longer --timeout`

    // Terminal: the failed step's line, what its attempts ended in, and the stop naming the step.
    expect(human.code).toBe(2)
    expect(human.stdout).toMatch(new RegExp(`^ {2}✗ GET {5}/api/sandbox/state --- \\d+ms {2}slow state\\n {6}${escape(NOTE)}\\n {6}${escape(unreachable)}$`, 'm'))
    expect(human.stderr).toBe(`sandbox: ${stop}\n`)

    // JSON: the step is in `steps`, failed, with its note; `error` names it.
    expect(json.code).toBe(2)
    const scenario = JSON.parse(json.stdout).scenarios[0]
    expect(scenario).toMatchObject({ connection_error: true, error: `step 2 (slow state): ${unreachable}` })
    expect(scenario.steps.map((step: { name: string; ok: boolean }) => [step.name, step.ok])).toEqual([['config', true], ['slow state', false]])
    expect(scenario.steps[1]).toMatchObject({ index: 1, method: 'GET', path: '/api/sandbox/state', status: null, note: NOTE })

    // JUnit: the <error> names the step, and <system-out> has it with its retries.
    const testcase = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(join(dir, 'j.xml'), 'utf8')).testsuites.testsuite.testcase
    expect(testcase.error).toMatchObject({ type: 'ConnectionError', message: `step 2 (slow state): ${unreachable}` })
    expect(testcase.error['#text']).toContain(`note: ${NOTE}`)
    expect(testcase['system-out']).toMatch(new RegExp(`^file: slow-state\\.json\\nok {3}1\\. GET /api/sandbox/config 200 \\d+ms \\(config\\)\\nFAIL 2\\. GET /api/sandbox/state --- \\d+ms \\(slow state\\)\\n {6}${escape(NOTE)}$`))

    // GitHub: the annotation is titled with the step, and the summary's row names it with its note.
    expect(json.stderr).toContain(`::error title=slow-state%3A step 2 (slow state)%3A the run stopped::${stop}\n`)
    expect(await readFile(summary, 'utf8')).toMatch(/^\| slow-state: Slow state \| ❌ failed \| [\d.]+ m?s \| step 2 \(slow state\): cannot reach .* \| 4 attempts, timed out \(no answer within 0\.5 s\) each time; .* \|$/m)
  })
})
