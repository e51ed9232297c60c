import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const KEY = 'sk_sandbox_e2e_faults_0123456789'
const auth = { authorization: `Bearer ${KEY}` }

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-faults')

/** A faults file in a new temp dir: 503 on GET config, drop_before on GET loans. */
async function writeFaults(text = JSON.stringify({ seed: 7, rules: [{ method: 'GET', path: '/api/sandbox/config', fault: 'status', status: 503 }, { path: '/api/sandbox/loans', fault: 'drop_before' }] })) {
  const dir = await tempDir()
  const file = join(dir, 'faults.json')
  await writeFile(file, text)
  return { dir, file }
}

describe('sandbox serve --faults', () => {
  it('says at start that faults are on, marks each faulted request line, and sandbox logs records the fault', async () => {
    const { dir, file } = await writeFaults()
    const serve = await startServe(['--port', '0', '--data-dir', dir, '--faults', file])
    expect(serve.output()).toContain(`faults: on, 2 rules from ${file} (seed 7): requests may fail, stall or be cut on purpose\nsandbox ready: `)
    const failed = await fetch(`${serve.url}/api/sandbox/config`, { headers: auth })
    expect(failed.status).toBe(503)
    expect(await failed.json()).toMatchObject({ error_code: 'SANDBOX_FAULT_INJECTED' })
    await expect(fetch(`${serve.url}/api/sandbox/loans`, { headers: auth })).rejects.toThrow(/fetch failed/)
    expect((await fetch(`${serve.url}/api/sandbox/state`, { headers: auth })).status).toBe(200)
    await waitUntil(() => serve.output().includes('GET /api/sandbox/state'), 10_000, 'the request lines')
    expect(serve.output()).toMatch(/GET \/api\/sandbox\/config 503 \d+ms req_[0-9a-f]{20} SANDBOX_FAULT_INJECTED fault: status 503\n/)
    expect(serve.output()).toMatch(/GET \/api\/sandbox\/loans 0 \d+ms req_[0-9a-f]{20} fault: drop_before\n/)
    expect(serve.output()).toMatch(/GET \/api\/sandbox\/state 200 \d+ms req_[0-9a-f]{20}\n/)
    expect(await serve.stop()).toBe(0)
    const logs = await runCli(['logs', '--data-dir', dir, '--key', KEY])
    expect(logs.code).toBe(0)
    const lines = logs.stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/ GET {4}\/api\/sandbox\/config 503 SANDBOX_FAULT_INJECTED \d+ms req_\w+ fault=status 503$/)
    expect(lines[1]).toMatch(/ GET {4}\/api\/sandbox\/loans 0 - \d+ms req_\w+ fault=drop_before$/)
    expect(lines[2]).not.toContain('fault')
  })

  it('--json-logs: a faults event before ready, and a fault field on the faulted request only (SANDBOX_FAULTS)', async () => {
    const { file } = await writeFaults()
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--json-logs'], { env: { SANDBOX_FAULTS: file } })
    const start = serve.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(start.map((line) => line.event)).toEqual(['faults', 'ready'])
    expect(start[0]).toEqual({ level: 'warn', event: 'faults', file, rules: 2, seed: 7 })
    expect((await fetch(`${serve.url}/api/sandbox/config`, { headers: auth })).status).toBe(503)
    expect((await fetch(`${serve.url}/api/sandbox/state`, { headers: auth })).status).toBe(200)
    await waitUntil(() => serve.output().includes('/api/sandbox/state'), 10_000, 'the request lines')
    const requests = serve.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === 'request')
    expect(requests.map((line) => [line.path, line.fault])).toEqual([['/api/sandbox/config', 'status 503'], ['/api/sandbox/state', undefined]])
    expect(await serve.stop()).toBe(0)
  })

  // README: stopping the server ends a latency fault's wait and the answer goes out; serve's stop
  // closed its listener first, which waited 10 s for that request, then cut it.
  it('answers a request waiting out a latency fault when stopped, rather than cutting it', async () => {
    const { dir, file } = await writeFaults(JSON.stringify({ seed: 1, rules: [{ fault: 'latency', ms: 60_000 }] }))
    const serve = await startServe(['--port', '0', '--data-dir', dir, '--faults', file])
    const answer = fetch(`${serve.url}/api/sandbox/loans/flow`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'latency-stop-1' },
      body: JSON.stringify({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 10_000, loan_currency: 'USDT' }),
    }).then((response) => response.status, (error: Error) => error.message)
    // The route runs at once (its session document is written), then its answer waits.
    const sessions = () => readdir(join(dir, 'session')).catch(() => [])
    for (const deadline = Date.now() + 10_000; (await sessions()).length === 0 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await serve.stop()).toBe(0)
    expect(await answer).toBe(200)
  })

  it('exits 2 on a bad faults file, naming the file and the field (or the line and column)', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const bad = await writeFaults(JSON.stringify({ rules: [{ fault: 'latency', ms: 10 }, { fault: 'status', status: 404 }] }))
    const broken = await writeFaults('{\r\n  "rules": [\r\n    { "fault": "drop_before", }\r\n  ]\r\n}\r\n')
    const twice = await writeFaults('{\n  "rules": [],\n  "rules": []\n}\n')
    // Without `fault`, zod checks no other key of the rule: the misspelt one is still named, with its hint.
    const misspelt = await writeFaults(JSON.stringify({ rules: [{ fualt: 'latency', ms: 10 }] }))
    const cases: Array<[string[], RegExp]> = [
      [['--faults', bad.file], new RegExp(`^sandbox: --faults ${bad.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a valid fault injection file: rules\\.1\\.status: Invalid option: expected one of 500\\|502\\|503\\|504\\|429\\n$`)],
      [['--faults', broken.file], /^sandbox: --faults \S+faults\.json: not valid JSON \(line 3, column 29\): a comma before }; JSON allows no trailing comma\n$/],
      [['--faults', misspelt.file], /^sandbox: --faults \S+faults\.json is not a valid fault injection file: rules\.0: Unrecognized key: "fualt" \(did you mean fault\?\)\n$/],
      [['--faults', twice.file], /^sandbox: --faults \S+faults\.json: rules: duplicate key "rules" \(lines 2 and 3\)/],
      [['--faults', join(bad.dir, 'missing.json')], /^sandbox: cannot read --faults \S+missing\.json: no such file\n$/],
      [['--faults', ''], /--faults needs a value, got an empty string/],
    ]
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await runCli(['serve', '--port', '0', '--storage', 'memory', ...args])
      expect(code, args.join(' ')).toBe(2)
      expect(stdout).toBe('')
      expect(stderr).toMatch(message)
    }
    // From the environment, the message names the variable: it is nowhere on the command line.
    for (const [file, message] of [[bad.file, /^sandbox: SANDBOX_FAULTS \S+faults\.json is not a valid fault injection file: rules\.1\.status: /], [join(bad.dir, 'missing.json'), /^sandbox: cannot read SANDBOX_FAULTS \S+missing\.json: no such file\n$/]] as const) {
      const { code, stderr } = await runCli(['serve', '--port', '0', '--storage', 'memory'], { env: { SANDBOX_FAULTS: file } })
      expect([code, stderr]).toEqual([2, expect.stringMatching(message)])
    }
  })
})
