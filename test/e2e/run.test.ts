import { spawn, spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run')
const SHIPPED = readdirSync(join(import.meta.dirname, '../../scenarios')).filter((name) => name.endsWith('.json')).length

const WRONG = {
  name: 'Expects the wrong status',
  description: 'run_kyt with no draft is a 409, not a 200',
  steps: [{ name: 'kyt first', request: { method: 'POST', path: '/api/sandbox/loans/flow', body: { action: 'run_kyt' } }, expect: { status: 200 } }],
}

describe('sandbox run', () => {
  it('runs every shipped scenario on an in-process server and reports like a test runner', async () => {
    const { code, stdout } = await runCli(['run'])
    expect(code).toBe(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines.at(-1)).toBe(`${SHIPPED} passed, 0 failed`)
    expect(stdout).toMatch(/^loan-flow — Loan issuance through the 4-step flow$/m)
    expect(stdout).toMatch(/^ {2}✓ POST {4}\/api\/sandbox\/loans\/flow 200 \d+ms {2}start the collateral transfer$/m)
    expect(stdout).toMatch(/✓ POST {4}\/api\/sandbox\/loans\/flow 409 FLOW_CONFLICT \d+ms/)
    expect(stdout).not.toMatch(/\u001b\[/) // no colour without a TTY
  })

  it('--json prints one JSON document and nothing else; --junit writes XML a CI reads', async () => {
    const dir = await tempDir()
    const junit = join(dir, 'reports/junit.xml')
    const { code, stdout } = await runCli(['run', '--json', '--junit', junit, 'loan-flow', 'repay-full'])
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    expect(report).toMatchObject({ passed: 2, failed: 0, started_server: true })
    expect(report.scenarios.map((s: { id: string }) => s.id)).toEqual(['loan-flow', 'repay-full'])
    expect(report.scenarios[0].steps.find((step: { name: string }) => step.name === 'start the collateral transfer')).toMatchObject({ method: 'POST', path: '/api/sandbox/loans/flow', status: 200, error_code: null, ok: true })
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    expect(xml.testsuites).toMatchObject({ tests: '2', failures: '0' })
    expect(xml.testsuites.testsuite.testcase.map((t: { classname: string }) => t.classname)).toEqual(['scenarios.loan-flow', 'scenarios.repay-full'])
  })

  it('exits 1 on a failed scenario, with a diff of what was expected and received', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'wrong.json'), JSON.stringify(WRONG))
    const junit = join(dir, 'junit.xml')
    const { code, stdout, stderr } = await runCli(['run', '--dir', dir, '--junit', junit])
    expect(code).toBe(1)
    expect(stdout).toContain('  ✗ POST    /api/sandbox/loans/flow 409 FLOW_CONFLICT')
    expect(stdout).toContain('      status\n        - expected 200\n        + received 409')
    expect(stdout).toContain('sent {"action":"run_kyt"}')
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('0 passed, 1 failed')
    // Counts of one are singular: not "1 requests", not "1 of 1 scenarios".
    expect(stdout).toMatch(/^1 scenario, 1 request in \d+ ms \(\d+ req\/s\) against http:\/\/127\.0\.0\.1:\d+ \(in-process server\)$/m)
    expect(stderr).toBe('sandbox: 1 of 1 scenario failed\n')
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    expect(xml.testsuites.testsuite.testcase.failure.message).toBe('step 1 (kyt first): status: expected 200, got 409')
  })

  it('a failed --json run prints its whole report into a pipe, past the pipe\'s 64 KB', async () => {
    const dir = await tempDir()
    // Each failed step reports the answer it got (~2 KB of config): 40 make a report of ~80 KB.
    const failing = (i: number) => ({ name: `config ${i}`, description: 'reads the config', steps: [{ name: 'get config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 201 } }] })
    await Promise.all(Array.from({ length: 40 }, (_, i) => writeFile(join(dir, `config-${i}.json`), JSON.stringify(failing(i)))))
    // Through a shell pipe, as `| jq` gets it (node's own stdio pipes are sockets with a larger
    // buffer), whose reader starts late: the pipe is full when the run ends, as with a busy reader.
    const piped = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" run --dir "${dir}" --json | (sleep 0.5; cat); exit \${PIPESTATUS[0]}`], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect(piped.status).toBe(1)
    expect(piped.stdout.length).toBeGreaterThan(65_536)
    expect(JSON.parse(piped.stdout)).toMatchObject({ passed: 0, failed: 40 })
  })

  it('--bail names the scenarios it did not run, and JUnit carries the step notes', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'a-wrong.json'), JSON.stringify(WRONG))
    await writeFile(join(dir, 'b-never.json'), JSON.stringify({ ...WRONG, name: 'Never run' }))
    const hint = { name: 'local receiver', request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } }
    await writeFile(join(dir, 'c-hint.json'), JSON.stringify({ name: 'Refused receiver', description: 'd', steps: [hint] }))
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    const junit = join(dir, 'junit.xml')
    const bail = await runCli(['run', '--dir', dir, '--bail', '--base-url', server.url])
    expect(bail.code).toBe(1)
    expect(bail.stdout).toMatch(/^- b-never skipped: not run: --bail after a failed scenario$/m)
    expect(bail.stdout).toMatch(/^- c-hint skipped: not run: --bail after a failed scenario$/m)
    expect(bail.stdout.trimEnd().split('\n').at(-1)).toBe('0 passed, 1 failed, 2 skipped')
    // Without --allow-local-webhooks the server refuses the runner's receiver: the hint is in the JUnit failure.
    const hinted = await runCli(['run', join(dir, 'c-hint.json'), '--base-url', server.url, '--junit', junit])
    expect(hinted.code).toBe(1)
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    const testcase = xml.testsuites.testsuite.testcase
    expect(testcase.failure['#text']).toContain('note: the server refuses the runner\'s receiver on this machine: start it with `sandbox serve --allow-local-webhooks`')
    expect(testcase['system-out']).toContain('sandbox serve --allow-local-webhooks')
    await server.stop()
  })

  it('runs scenario files given by path, with ids, in the order given and nothing else', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'wrong.json'), JSON.stringify(WRONG))
    const { code, stdout } = await runCli(['run', '--json', join(dir, 'wrong.json'), 'direct-loan'])
    expect(code).toBe(1)
    const report = JSON.parse(stdout)
    expect(report.scenarios.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual(['wrong:failed', 'direct-loan:passed'])
  })

  it('prints control characters of scenario names and steps as escapes, not to the terminal', async () => {
    const dir = await tempDir()
    const title = 'Clears \u001b[2J\u001b]0;pwned\u0007 the screen\nfake: 9 passed, 0 failed'
    await writeFile(join(dir, 'ansi.json'), JSON.stringify({ ...WRONG, name: title, steps: [{ ...WRONG.steps[0], name: 'step \u001b[31mred' }] }))
    const { code, stdout } = await runCli(['run', '--dir', dir])
    expect(code).toBe(1)
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/) // NO_COLOR: no escape of our own either
    expect(stdout).toContain('ansi — Clears \\u001b[2J\\u001b]0;pwned\\u0007 the screen\\nfake: 9 passed, 0 failed\n')
    expect(stdout).toContain('  step \\u001b[31mred\n')
    expect((await runCli(['run', '--list', '--dir', dir])).stdout).toContain('Clears \\u001b[2J')
    // An error names what the file holds: escaped on stderr too, its own lines kept.
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ ...WRONG, '\u001b[31mkey': 1, steps: [{ request: { method: 'GET', path: 'relative' } }] }))
    const broken = await runCli(['run', '--dir', dir])
    expect(broken.code).toBe(2)
    expect(broken.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(broken.stderr.trimEnd().split('\n')).toHaveLength(2)
    expect(broken.stderr).toContain('\\u001b[31mkey')
  })

  it('runs a scenario named twice once, where it was first named, with one JUnit testcase', async () => {
    const dir = await tempDir()
    const junit = join(dir, 'junit.xml')
    const shipped = join(import.meta.dirname, '../../scenarios/direct-loan.json')
    const { code, stdout } = await runCli(['run', '--json', '--junit', junit, 'direct-loan', 'loan-flow', 'direct-loan', shipped])
    expect(code).toBe(0)
    expect(JSON.parse(stdout).scenarios.map((s: { id: string }) => s.id)).toEqual(['direct-loan', 'loan-flow'])
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    expect(xml.testsuites.testsuite.testcase.map((t: { classname: string }) => t.classname)).toEqual(['scenarios.direct-loan', 'scenarios.loan-flow'])
  })

  it('walks a running serve given by --base-url or SANDBOX_BASE_URL', async () => {
    const server = await startServe(['--port', '0', '--storage', 'memory', '--allow-local-webhooks'])
    const viaFlag = await runCli(['run', '--base-url', server.url, '--tag', 'webhooks'])
    expect(viaFlag.code).toBe(0)
    expect(viaFlag.stdout).toContain(`against ${server.url.replace(/\/$/, '')}`)
    expect(viaFlag.stdout.trimEnd().split('\n').at(-1)).toBe('4 passed, 0 failed')
    const viaEnv = await runCli(['run', 'loan-flow', '--json'], { env: { SANDBOX_BASE_URL: server.url } })
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ passed: 1, started_server: false })
    await server.stop()
  })

  // Seven CLI runs one after another: 7-14 s on an idle machine, over 20 s on a busy one.
  it('--wait gives a server started in the background time to come up', { timeout: 60_000 }, async () => {
    const { createServer } = await import('node:net')
    const port = await new Promise<number>((resolve) => { const probe = createServer().listen(0, '127.0.0.1', () => { const { port: free } = probe.address() as { port: number }; probe.close(() => resolve(free)) }) })
    const run = runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`, '--wait', '20s'])
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const server = await startServe(['--port', String(port), '--storage', 'memory'])
    const { code, stdout } = await run
    expect(code).toBe(0)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed')
    await server.stop()
    const live = await runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`, '--api-key', 'sk_live_0123456789abcdef'])
    expect(live).toMatchObject({ code: 2, stderr: 'sandbox: --api-key must be a sandbox key (sk_sandbox_...), got "sk_live_0123..."\n' })
    const fromEnv = await runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`], { env: { SANDBOX_API_KEY: 'pk_test_1' } })
    expect(fromEnv).toMatchObject({ code: 2, stderr: 'sandbox: SANDBOX_API_KEY must be a sandbox key (sk_sandbox_...), got "pk_test_1"\n' })
    // An empty variable is no key: each scenario gets a fresh one (in-process server here).
    expect((await runCli(['run', 'loan-flow'], { env: { SANDBOX_API_KEY: '' } })).code).toBe(0)
    // Credentials in the URL: refused at once, the password never printed.
    const withUser = await runCli(['run', 'loan-flow', '--json', '--base-url', `http://ci:s3cretpw@127.0.0.1:${port}/prefix`])
    expect(withUser.code).toBe(2)
    expect(JSON.parse(withUser.stdout)).toEqual({ error: { code: 'USAGE', message: `--base-url cannot hold a user name or password (http://****@127.0.0.1:${port}): fetch sends none; the API takes its key from --api-key` } })
    expect(withUser.stderr).not.toContain('s3cretpw')
    const bad = await runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`, '--wait', 'soon'])
    expect(bad).toMatchObject({ code: 2, stderr: 'sandbox: --wait: invalid duration "soon": expected a number and ms, s, m, h, d or w (e.g. 500ms, 1.5s, 30s or 10m)\n' })
    // A wait of days is a typo: refused before any request, with the range.
    const long = await runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`, '--wait', '30d'])
    expect(long).toMatchObject({ code: 2, stderr: 'sandbox: --wait: duration "30d" is out of range: from 1ms to 1h\n' })
    // Short and decimal waits are taken: nothing answers, so the run says so once they are over.
    for (const wait of ['500ms', '0.5s']) {
      const short = await runCli(['run', 'loan-flow', '--base-url', `http://127.0.0.1:${port}`, '--wait', wait])
      expect(short.code, wait).toBe(2)
      expect(short.stderr, wait).toMatch(/^sandbox: cannot reach .*is the server running\?/)
      // It says it waited, rather than advising the --wait it was given.
      expect(short.stderr, wait).toContain(`nothing answered within --wait ${wait};`)
    }
  })

  it('refuses a --base-url with a query or fragment (exit 2) before any request, rather than failing each one as a 404 of /', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    // The paths were appended to the query: GET <url>?x=1/api/sandbox/config asked for / and got 404, exit 1.
    for (const [tail, shown] of [['?x=1', '?x=1'], ['#frag', '#frag'], ['/?', '?']]) {
      const result = await runCli(['run', 'loan-flow', '--verbose', '--base-url', `${server.url}${tail}`])
      expect(result, tail).toMatchObject({ code: 2, stdout: '', stderr: `sandbox: --base-url "${server.url}${tail}" must not have a query or fragment (${shown}): the API's paths would go after it, so every request would ask for / itself: give the server's root, ${server.url}\n` })
    }
    const fromEnv = await runCli(['run', 'loan-flow'], { env: { SANDBOX_BASE_URL: `${server.url}/gateway?x=1` } })
    expect(fromEnv).toMatchObject({ code: 2, stderr: `sandbox: SANDBOX_BASE_URL "${server.url}/gateway?x=1" must not have a query or fragment (?x=1): the API's paths would go after it, so every request would ask for /gateway itself: give the server's root, ${server.url}/gateway\n` })
    // Every command that takes --base-url reads it the same way.
    const deliveries = await runCli(['webhook', 'deliveries', '--json', '--base-url', `${server.url}?x=1`])
    expect(deliveries.code).toBe(2)
    expect(JSON.parse(deliveries.stdout)).toEqual({ error: { code: 'USAGE', message: `--base-url "${server.url}?x=1" must not have a query or fragment (?x=1): the API's paths would go after it, so every request would ask for / itself: give the server's root, ${server.url}` } })
    await server.stop()
  })

  it('says when it waits for the rate limit, so a slow run does not look stuck', async () => {
    const server = await startServe(['--port', '0', '--storage', 'memory', '--rate-limit', '2/1'])
    const dir = await tempDir()
    const file = join(dir, 'three-gets.json')
    const get = { request: { method: 'GET', path: '/api/sandbox/config' } }
    await writeFile(file, JSON.stringify({ name: 'Three GETs', description: 'one more than the limit allows in a second', steps: [get, get, get] }))
    const { code, stdout } = await runCli(['run', file, '--base-url', server.url, '--api-key', 'sk_sandbox_rate_limited_run_01'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^ {6}429 rate limited: waiting 1 s, then GET \/api\/sandbox\/config again$/m)
    expect(stdout).toMatch(/^ {6}2 attempts$/m)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed')
    await server.stop()
  })

  it('says before each network retry that it waits, and how long a silent server took (--timeout)', async () => {
    const { createServer } = await import('node:net')
    const sockets: import('node:net').Socket[] = []
    const silent = createServer((socket) => { sockets.push(socket); socket.on('error', () => {}) })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`
    const [human, json] = await Promise.all([
      runCli(['run', 'repay-full', '--base-url', url, '--timeout', '1s']),
      runCli(['run', 'repay-full', '--base-url', url, '--timeout', '1s', '--json']),
    ])
    for (const socket of sockets) socket.destroy()
    silent.close()
    const line = (attempt: number, wait: string) => `network error (no answer within 1 s): waiting ${wait}, then POST /api/sandbox/loans again with the same Idempotency-Key (attempt ${attempt} of 4)`
    expect(human.code).toBe(2)
    expect(human.stdout).toContain(`      ${line(2, '100 ms')}\n      ${line(3, '200 ms')}\n      ${line(4, '400 ms')}\n`)
    expect(human.stderr).toMatch(/^sandbox: cannot reach .* \(timed out after 4 attempts of 1 s each\); is the server running\?/)
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout).scenarios[0].connection_error).toBe(true)
    expect(json.stderr).toContain(`sandbox: ${line(2, '100 ms')}\nsandbox: ${line(3, '200 ms')}\n`)
    expect((await runCli(['run', 'loan-flow', '--timeout', '0s'])).stderr).toBe('sandbox: --timeout: duration "0s" is out of range: from 1ms to 1h\n')
  })

  it('refuses a --timeout without a unit (exit 2), offering examples within its 1h (30d was offered)', async () => {
    for (const timeout of ['0', '500']) {
      expect(await runCli(['run', 'loan-flow', '--timeout', timeout]), timeout).toMatchObject({ code: 2, stdout: '', stderr: `sandbox: --timeout: invalid duration "${timeout}": expected a number and ms, s, m, h, d or w (e.g. 500ms, 1.5s, 30s or 10m)\n` })
    }
  })

  it('against serve --keys: exits 2 naming the fix for a refused key; with a registered one, skips key-isolation and recovers from a run that left a draft open', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    const keys = join(dir, 'keys.json')
    const created = await runCli(['keys', 'create', '--keys', keys])
    const key = created.stdout.trim()
    expect(key).toMatch(/^sk_sandbox_/)
    const server = await startServe(['--port', '0', '--storage', 'memory', '--rate-limit', 'off', '--allow-local-webhooks', '--keys', keys])
    const junit = join(dir, 'junit.xml')
    const generated = await runCli(['run', 'loan-flow', 'repay-full', '--base-url', server.url, '--junit', junit])
    expect(generated.code).toBe(2)
    expect(generated.stderr).toBe('sandbox: loan-flow: the server accepts only registered keys (a fresh generated key got 401 SANDBOX_API_KEY_INVALID: The API key is not registered on this sandbox.): pass one with --api-key (`sandbox keys create --keys FILE` makes one); the run stopped there\n')
    expect(generated.stdout).toMatch(/^- repay-full skipped: not run: the run stopped when the server refused loan-flow's key$/m)
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    expect(xml.testsuites).toMatchObject({ tests: '2', failures: '0', errors: '1' })
    expect(xml.testsuites.testsuite.testcase[0].error.type).toBe('KeyRefused')

    const registered = await runCli(['run', 'key-isolation', 'loan-flow', '--base-url', server.url, '--api-key', key])
    expect(registered.code).toBe(0)
    expect(registered.stdout).toMatch(/^- key-isolation skipped: needs open mode: it makes its own keys \(other\), and this server accepts only registered keys/m)
    expect(registered.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed, 1 skipped')

    // A run that fails with a draft left open on the key, then a whole run on it: the scenarios
    // finish the leftover draft first and all pass (key-isolation skipped, as above).
    const leaves = join(dir, 'leaves-a-draft.json')
    const start = { request: { method: 'POST', path: '/api/sandbox/loans/flow', body: { action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 2000 } } }
    await writeFile(leaves, JSON.stringify({ name: 'Leaves a draft', description: 'fails after opening a draft', steps: [start, { request: { method: 'GET', path: '/api/sandbox/loans' }, expect: { status: 418 } }] }))
    expect((await runCli(['run', leaves, '--base-url', server.url, '--api-key', key])).code).toBe(1)
    const whole = await runCli(['run', '--base-url', server.url, '--api-key', key])
    expect(whole.stdout.trimEnd().split('\n').at(-1)).toBe(`${SHIPPED - 1} passed, 0 failed, 1 skipped`)
    expect(whole.code).toBe(0)
    expect(whole.stdout).toContain('state says next: confirm_btc, continuing at step 2')

    expect((await runCli(['keys', 'revoke', key, '--keys', keys])).code).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 1000)) // the server rereads the keys file within a second
    const revoked = await runCli(['run', 'loan-flow', '--base-url', server.url, '--api-key', key, '--json'])
    expect(revoked.code).toBe(2)
    expect(revoked.stderr).toBe("sandbox: loan-flow: the server refuses the run's --api-key (401 SANDBOX_API_KEY_INVALID: The API key is revoked.): check it with `sandbox keys list`, or create one with `sandbox keys create`; the run stopped there\n")
    // `error` says why the run stopped, as for a server that cannot be reached: the step and its note.
    expect(JSON.parse(revoked.stdout).scenarios[0]).toMatchObject({ status: 'failed', key_refused: true, error: expect.stringMatching(/^step 1 \(leftover draft: .*\): the server refuses the run's --api-key \(401 SANDBOX_API_KEY_INVALID: The API key is revoked\.\): check it with `sandbox keys list`/) })
    await server.stop()
  })

  it('exits 2 when the server cannot be reached, or on a usage or scenario-file error', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    const url = server.url
    await server.stop()
    const unreachable = await runCli(['run', 'loan-flow', '--base-url', url])
    expect(unreachable.code).toBe(2)
    expect(unreachable.stderr).toMatch(/^sandbox: cannot reach .*ECONNREFUSED.*is the server running\?/)
    // A port fetch blocks was never tried: no server to start, another port to pick.
    const blocked = await runCli(['run', 'loan-flow', '--base-url', 'http://127.0.0.1:6665'])
    expect(blocked.code).toBe(2)
    expect(blocked.stderr).toMatch(/^sandbox: cannot reach http:\/\/127\.0\.0\.1:6665\/\S+: fetch refuses port 6665 before connecting/)
    expect(blocked.stderr).not.toContain('is the server running?')

    const unknown = await runCli(['run', 'no-such-scenario'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown scenario no-such-scenario; known: ')

    const dir = await tempDir()
    await writeFile(join(dir, 'broken.json'), JSON.stringify({ ...WRONG, steps: [{ request: { method: 'GET', path: 'relative' } }] }))
    const broken = await runCli(['run', '--dir', dir])
    expect(broken.code).toBe(2)
    expect(broken.stderr).toBe(`sandbox: ${join(dir, 'broken.json')}: step 1 request.path: a path starting with /\n`)
    const typeFile = join(dir, 'type-error.json')
    await writeFile(typeFile, JSON.stringify({ ...WRONG, steps: [WRONG.steps[0], { request: { method: 'POST', path: 5 } }] }))
    const typeError = await runCli(['run', typeFile])
    expect(typeError.code).toBe(2)
    expect(typeError.stderr).toBe(`sandbox: ${typeFile}: step 2 request.path: Invalid input: expected string, received number\n`)
    // A key written twice is refused: JSON.parse would keep the 404 and drop the 200 unchecked.
    const twiceFile = join(dir, 'twice.json')
    await writeFile(twiceFile, '{\n  "name": "n", "description": "d",\n  "steps": [{ "request": { "method": "GET", "path": "/api/sandbox/config" },\n    "expect": { "status": 200,\n      "status": 404 } }]\n}\n')
    const duplicated = await runCli(['run', twiceFile])
    expect(duplicated).toMatchObject({ code: 2, stdout: '' })
    expect(duplicated.stderr).toBe(`sandbox: ${twiceFile}: step 1 expect.status: duplicate key "status" (lines 4 and 5): JSON keeps only the last one, so the first would be ignored\n`)

    // A scenario written in YAML beside the JSON ones is refused, not skipped; other YAML (a compose
    // file) is not a scenario and is left alone. Two files with one id are refused too.
    const yamlDir = await tempDir()
    await writeFile(join(yamlDir, 'fine.json'), JSON.stringify({ ...WRONG, steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))
    await writeFile(join(yamlDir, 'docker-compose.yml'), 'services:\n  app:\n    image: node:20\n')
    expect((await runCli(['run', '--dir', yamlDir])).code).toBe(0)
    await writeFile(join(yamlDir, 'more.yaml'), 'name: more\nsteps:\n  - request: { method: GET, path: /api/sandbox/config }\n')
    expect(await runCli(['run', '--dir', yamlDir])).toMatchObject({ code: 2, stderr: `sandbox: ${join(yamlDir, 'more.yaml')}: scenario files are JSON (.json); YAML is not read\n` })
    const other = await tempDir()
    await writeFile(join(other, 'fine.json'), JSON.stringify({ ...WRONG, steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))
    const twice = await runCli(['run', join(yamlDir, 'fine.json'), join(other, 'fine.json')])
    expect(twice).toMatchObject({ code: 2, stderr: expect.stringContaining('are both scenario "fine"; rename one') })
    // One file, spelled two ways, is one scenario.
    expect((await runCli(['run', join(other, 'fine.json'), `${other}/./fine.json`])).code).toBe(0)

    expect((await runCli(['run', '--no-such-flag'])).code).toBe(2)
  })

  it('--json prints one JSON document on stdout when the run cannot start, so a jq after it reads an error', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'afile'), '')
    await writeFile(join(dir, 'broken.json'), '{ "name": "n", }')
    const documentOf = async (args: string[]) => {
      const { code, stdout, stderr } = await runCli(['run', '--json', ...args])
      expect(code, args.join(' ')).toBe(2)
      const document = JSON.parse(stdout)
      // The same message as on stderr, for a person reading the CI log.
      expect(stderr.split('\n')[0], args.join(' ')).toMatch(new RegExp(`^(sandbox: |error: )${document.error.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`))
      return document
    }
    // A tag no scenario has: the tags there are, and the one a typo meant; --list says so too.
    expect(await documentOf(['--tag', 'nosuch'])).toEqual({ error: { code: 'USAGE', message: 'no scenario has the tag nosuch; tags: direct, direct-actions, errors, idempotency, isolation, limits, loan-flow, local-only, partner, recovery, repayment, smoke, webhooks' } })
    expect(await documentOf(['--list', '--tag', 'webhook'])).toEqual({ error: { code: 'USAGE', message: 'no scenario has the tag webhook (did you mean webhooks?); tags: direct, direct-actions, errors, idempotency, isolation, limits, loan-flow, local-only, partner, recovery, repayment, smoke, webhooks' } })
    expect(await documentOf(['loan-flow', '--tag', 'webhooks'])).toEqual({ error: { code: 'USAGE', message: 'none of the scenarios named has the tag webhooks' } })
    expect(await documentOf(['loan_flow'])).toMatchObject({ error: { code: 'SCENARIO', message: expect.stringMatching(/^unknown scenario loan_flow \(did you mean loan-flow\?\); known: /) } })
    expect(await documentOf(['--dir', join(dir, 'missing')])).toEqual({ error: { code: 'USAGE', message: `--dir ${join(dir, 'missing')}: no such directory` } })
    // A scenario file named as an argument that is not there is one that cannot be loaded.
    expect(await documentOf([join(dir, 'missing.json')])).toEqual({ error: { code: 'SCENARIO', message: `no such file or directory: ${join(dir, 'missing.json')}` } })
    expect(await documentOf(['--dir', join(dir, 'afile')])).toEqual({ error: { code: 'USAGE', message: `--dir ${join(dir, 'afile')} is not a directory (give scenario files as arguments, or the directory that holds them)` } })
    expect(await documentOf(['--dir', dir])).toEqual({ error: { code: 'SCENARIO', message: `${join(dir, 'broken.json')}: not valid JSON (line 1, column 14): a comma before }; JSON allows no trailing comma` } })
    expect(await documentOf(['no-such-scenario'])).toMatchObject({ error: { code: 'SCENARIO', message: expect.stringMatching(/^unknown scenario no-such-scenario; known: /) } })
    expect(await documentOf(['--list', '--dir', join(dir, 'missing')])).toMatchObject({ error: { code: 'USAGE' } })
    // Errors commander finds while parsing, and the empty value refused before the action.
    expect(await documentOf(['--no-such-flag'])).toEqual({ error: { code: 'USAGE', message: "unknown option '--no-such-flag'" } })
    expect(await documentOf(['--junit', ''])).toEqual({ error: { code: 'USAGE', message: '--junit needs a value, got an empty string' } })
    expect(await documentOf(['loan-flow', '--junit', join(dir, 'afile/x.xml')])).toEqual({ error: { code: 'OUTPUT', message: `cannot write the JUnit report to ${join(dir, 'afile/x.xml')}: ${join(dir, 'afile')} is a file, not a directory` } })
    // Without --json, stdout stays empty; once the report is out, an error adds no second document.
    expect(await runCli(['run', '--tag', 'nosuch'])).toMatchObject({ code: 2, stdout: '', stderr: 'sandbox: no scenario has the tag nosuch; tags: direct, direct-actions, errors, idempotency, isolation, limits, loan-flow, local-only, partner, recovery, repayment, smoke, webhooks\n' })
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    await server.stop()
    const unreachable = await runCli(['run', 'loan-flow', '--json', '--base-url', server.url])
    expect(unreachable.code).toBe(2)
    expect(JSON.parse(unreachable.stdout)).toMatchObject({ failed: 1, scenarios: [{ id: 'loan-flow', connection_error: true }] })
  })

  it('keeps its exit code when the reader of stdout goes away (| head -1), and other commands stop quietly', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    /** Runs `sandbox ARGS`, closing its stdout at the first output, as `head -1` does; resolves with the exit code and stderr. */
    const runIntoHead = (args: string[]) => new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } })
      let stderr = ''
      child.stderr.on('data', (chunk) => { stderr += chunk })
      child.stdout.once('data', () => child.stdout.destroy())
      child.on('close', (code) => resolve({ code, stderr }))
    })
    const dir = await tempDir()
    // The first scenario prints its header at once; the failure comes a second later, to a closed pipe.
    const slow = { request: { method: 'GET', path: '/api/sandbox/config', until_ms: 1000 }, expect: { status: 418 } }
    await writeFile(join(dir, 'slow-failure.json'), JSON.stringify({ name: 'Fails after a second', description: 'd', steps: [slow] }))
    await writeFile(join(dir, 'then-more.json'), JSON.stringify({ name: 'More output', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))
    expect(await runIntoHead(['run', '--dir', dir])).toEqual({ code: 1, stderr: 'sandbox: 1 of 2 scenarios failed\n' })
    expect(await runIntoHead(['run', '--dir', dir, '--json'])).toMatchObject({ code: 1 })
    expect(await runIntoHead(['run', 'direct-loan', 'loan-flow'])).toEqual({ code: 0, stderr: '' })
    expect(await runIntoHead(['openapi'])).toEqual({ code: 0, stderr: '' })
  })

  it('exits 2 before running any scenario when the --junit path cannot be written', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'afile'), '')
    for (const junit of [join(dir, 'afile/x.xml'), join(dir, 'afile/reports/x.xml')]) {
      const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--junit', junit])
      expect(code).toBe(2)
      expect(stderr).toBe(`sandbox: cannot write the JUnit report to ${junit}: ${join(dir, 'afile')} is a file, not a directory\n`)
      expect(stdout).toBe('') // nothing ran
    }
    const { code, stderr } = await runCli(['run', 'loan-flow', '--junit', dir])
    expect(code).toBe(2)
    expect(stderr).toBe(`sandbox: cannot write the JUnit report to ${dir}: it is a directory\n`)
  })

  it('creates the missing directories of a --junit path, and fails at once on one the system will not create', async () => {
    const dir = await tempDir()
    const nested = join(dir, 'a/b/c/junit.xml')
    expect((await runCli(['run', 'direct-loan', '--junit', nested])).code).toBe(0)
    expect(await readFile(nested, 'utf8')).toContain('<testsuites')
    if (process.platform !== 'linux') return
    // Node's recursive mkdir spins forever on this path: a hang here means it is back.
    const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000))
    for (const junit of ['/proc/nope/x.xml', '/proc/nope/deeper/x.xml']) {
      const result = await Promise.race([runCli(['run', 'direct-loan', '--junit', junit]), hung])
      if (result === 'hung') killAll()
      expect(result).toMatchObject({ code: 2, stdout: '' })
      expect((result as { stderr: string }).stderr).toMatch(new RegExp(`^sandbox: cannot write the JUnit report to ${junit}: (cannot create the directory /proc/nope \\(\\w+\\)|permission denied \\(/proc/nope\\))\n$`))
    }
  })

  it('--list names every scenario with its tags', async () => {
    const { code, stdout } = await runCli(['run', '--list', '--json'])
    expect(code).toBe(0)
    const list = JSON.parse(stdout)
    expect(list).toHaveLength(SHIPPED)
    expect(list.find((s: { id: string }) => s.id === 'webhook-loan-events').tags).toContain('local-only')
  })

  it('--schema prints the JSON Schema of scenario files, the one the package ships as dist/scenario.schema.json', async () => {
    const { code, stdout, stderr } = await runCli(['run', '--schema', '--dir', '/nonexistent'])
    expect([code, stderr]).toEqual([0, ''])
    expect(JSON.parse(stdout)).toMatchObject({ $schema: 'http://json-schema.org/draft-07/schema#', title: 'partner-sandbox scenario', required: ['name', 'description', 'steps'] })
    expect(stdout).toBe(await readFile(join(import.meta.dirname, '../../dist/scenario.schema.json'), 'utf8'))
  })

  it('--schema with scenario ids, --tag or --list is a usage error (exit 2) that prints no schema, rather than a silent one', async () => {
    for (const [args, named] of [[['loan-flow'], 'scenario loan-flow'], [['--tag', 'webhooks'], '--tag'], [['--list'], '--list']] as const) {
      const { code, stdout, stderr } = await runCli(['run', '--schema', ...args])
      expect([code, stdout]).toEqual([2, ''])
      expect(stderr).toContain(`--schema cannot be used with ${named}`)
    }
  })
})
