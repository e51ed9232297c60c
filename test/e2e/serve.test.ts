import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const KEY = 'sk_sandbox_e2e_key_0123456789'
const auth = { authorization: `Bearer ${KEY}` }

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-e2e')

function post(url: string, path: string, body: unknown, idempotencyKey: string) {
  return fetch(`${url}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': idempotencyKey }, body: JSON.stringify(body) })
}

describe('sandbox serve', () => {
  it('lists its commands in --help', async () => {
    const { code, stdout } = await runCli(['--help'])
    expect(code).toBe(0)
    for (const command of ['serve', 'logs', 'keys']) expect(stdout).toContain(command)
    const serveHelp = await runCli(['serve', '--help'])
    for (const flag of ['--port', '--host', '--storage', '--data-dir', '--config', '--keys', '--rate-limit', '--json-logs']) expect(serveHelp.stdout).toContain(flag)
  })

  it('prints a readiness line, answers the API, logs requests and stops on SIGTERM with exit 0', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory'])
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(serve.output()).toMatch(/^sandbox ready: http:\/\/127\.0\.0\.1:\d+ \(storage memory, keys open, rate limit 120\/60s\)$/m)
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: auth })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('ratelimit-limit')).toBe('120')
    // The line comes after the answer, through a pipe: polled, as a busy machine takes longer.
    await waitUntil(() => serve.output().includes('GET /api/sandbox/config'), 10_000, 'the request line')
    expect(serve.output()).toMatch(/GET \/api\/sandbox\/config 200 \d+ms req_[0-9a-f]{20}/)
    expect(await serve.stop('SIGTERM')).toBe(0)
  })

  it('finishes an in-flight request before exiting on SIGINT', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet'])
    // A body sent slowly keeps the request in flight while the signal arrives.
    const encoder = new TextEncoder()
    let push!: (text: string | null) => void
    const body = new ReadableStream({ start(controller) { push = (text) => (text === null ? controller.close() : controller.enqueue(encoder.encode(text))) } })
    const pending = fetch(`${serve.url}/api/sandbox/loans`, {
      method: 'POST', headers: { ...auth, 'idempotency-key': 'slow-1' }, body, duplex: 'half',
    } as RequestInit)
    push('{"collateral_btc":0.1,')
    await new Promise((resolve) => setTimeout(resolve, 150))
    const exit = serve.stop('SIGINT')
    await new Promise((resolve) => setTimeout(resolve, 150))
    push('"loan_amount":1000}')
    push(null)
    const response = await pending
    expect(response.status).toBe(200)
    expect((await response.json()).activeLoans).toHaveLength(1)
    expect(await exit).toBe(0)
  })

  it.each([
    ['SIGINT', 'press Ctrl+C again to stop now', 130, ''],
    // `docker stop` or a supervisor: no Ctrl+C to press.
    ['SIGTERM', 'send SIGTERM again to stop now', 143, ''],
    ['SIGTERM', 'send SIGTERM again to stop now', 143, '--json-logs'],
  ] as const)('says why a stop on %s waits and how to stop now (%s), and stops at once on a second one (exit %i) %s', async (signal, hint, code, json) => {
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet', ...(json ? [json] : [])])
    // A body that never finishes keeps the stop waiting.
    let push!: (text: string) => void
    const body = new ReadableStream({ start(controller) { push = (text) => controller.enqueue(new TextEncoder().encode(text)) } })
    const pending = fetch(`${serve.url}/api/sandbox/loans`, {
      method: 'POST', headers: { ...auth, 'idempotency-key': 'never-ends' }, body, duplex: 'half',
    } as RequestInit).catch(() => null)
    push('{"collateral_btc":0.1,')
    await new Promise((resolve) => setTimeout(resolve, 150))
    serve.child.kill(signal)
    if (json) {
      await waitUntil(() => serve.output().includes('"event":"stopping"'), 5000, 'the stopping line')
      expect(serve.output()).toContain(`{"level":"info","event":"stopping","signal":"${signal}","message":"waiting for requests and webhook deliveries in flight (up to 10 s); ${hint}"}\n`)
      expect(await serve.stop(signal)).toBe(code)
      expect(serve.output()).toContain(`"event":"forced_stop","signal":"${signal}"`)
      await pending
      return
    }
    await waitUntil(() => serve.output().includes('stopping: waiting for requests'), 5000, 'the stopping line')
    expect(serve.output()).toContain(`stopping: waiting for requests and webhook deliveries in flight (up to 10 s); ${hint}\n`)
    expect(await serve.stop(signal)).toBe(code)
    expect(serve.output()).toContain('sandbox stopped without waiting')
    expect(serve.output()).not.toContain(`sandbox stopped (${signal})`)
    await pending
  })

  it('answers a chunked body over 1 MiB with 413 and keeps serving', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet'])
    const chunk = new TextEncoder().encode(`{"name":"${'x'.repeat(64 * 1024)}`)
    for (const path of ['/api/sandbox/loans/flow', '/api/sandbox/partner']) {
      let sent = 0
      const body = new ReadableStream({ pull: (controller) => (sent++ < 20 ? controller.enqueue(chunk) : controller.close()) })
      const refused = await fetch(`${serve.url}${path}`, { method: 'POST', headers: { ...auth, 'idempotency-key': `big-${path}` }, body, duplex: 'half' } as RequestInit)
      expect([refused.status, (await refused.json()).error_code]).toEqual([413, 'PAYLOAD_TOO_LARGE'])
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await fetch(`${serve.url}/api/sandbox/config`, { headers: auth })).status).toBe(200)
    expect(serve.child.exitCode).toBeNull()
    expect(await serve.stop('SIGTERM')).toBe(0)
    expect(serve.output()).not.toContain('TypeError')
  })

  it('logs a client that hangs up mid-body as a 400, without a stack', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory'])
    const { port } = new URL(serve.url)
    const upload = request({ host: '127.0.0.1', port, path: '/api/sandbox/loans', method: 'POST', headers: { ...auth, 'idempotency-key': 'cut-1', 'transfer-encoding': 'chunked' } })
    upload.on('error', () => {})
    upload.write('{"collateral_btc":')
    await new Promise((resolve) => setTimeout(resolve, 100))
    upload.destroy()
    await waitUntil(() => serve.output().includes('POST /api/sandbox/loans'), 5000, 'the request line')
    expect(serve.output()).toMatch(/POST \/api\/sandbox\/loans 400 \d+ms req_\w+ INVALID_REQUEST/)
    expect(serve.output()).not.toMatch(/ECONNRESET|at abortIncoming/)
    expect((await fetch(`${serve.url}/api/sandbox/config`, { headers: auth })).status).toBe(200)
    expect(await serve.stop('SIGTERM')).toBe(0)
  })

  it('refuses a busy port with exit 2 and a clear message', async () => {
    const blocker: Server = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      const { code, stderr } = await runCli(['serve', '--port', String(port), '--storage', 'memory'])
      expect(code).toBe(2)
      expect(stderr).toContain(`port ${port} on 127.0.0.1 is already in use; pick another with --port (0 = any free port)`)
      expect(stderr).not.toMatch(/\n\s+at /)
    } finally {
      blocker.close()
    }
  })

  it('refuses a port browsers and fetch() block with exit 2, saying so rather than calling it busy', async () => {
    const { code, stdout, stderr } = await runCli(['serve', '--port', '6665', '--storage', 'memory'])
    expect(code).toBe(2)
    expect(stderr).toContain('port 6665 is one that browsers and fetch() refuse to connect to (a blocked port of the fetch standard); pick another with --port (0 = any free port)')
    expect(`${stdout}${stderr}`).not.toMatch(/in use|\n\s+at /)
  })

  // Port 80 is privileged where the kernel says so; as root the test drops to nobody to see it.
  const portStart = '/proc/sys/net/ipv4/ip_unprivileged_port_start'
  const unprivilegedFrom = existsSync(portStart) ? Number(readFileSync(portStart, 'utf8').trim()) : 0
  const asRoot = process.getuid?.() === 0
  // nobody must be able to reach the CLI (a clone under /root is not readable to it).
  const canDrop = asRoot && existsSync('/usr/sbin/runuser') && spawnSync('/usr/sbin/runuser', ['-u', 'nobody', '--', 'test', '-r', BIN]).status === 0
  it.skipIf(unprivilegedFrom <= 80 || (asRoot && !canDrop))('refuses a privileged port as such, not as a busy one', () => {
    const command = asRoot ? ['/usr/sbin/runuser', '-u', 'nobody', '--', process.execPath] : [process.execPath]
    const result = spawnSync(command[0]!, [...command.slice(1), BIN, 'serve', '--port', '80', '--storage', 'memory'], { encoding: 'utf8', timeout: 10_000 })
    expect([result.status, result.stderr]).toEqual([2, 'sandbox: port 80 on 127.0.0.1 needs privileges this process does not have (ports below 1024 are for root); pick one from 1024 up with --port (0 = any free port)\n'])
  })

  it('refuses a --host it cannot listen on with exit 2, not as a busy port', async () => {
    // 192.0.2.1 is documentation space (RFC 5737): no machine has it, and nothing is sent to it.
    // (A name that does not resolve is refused the same way; not tested, as it would query DNS.)
    for (const port of ['0', '45123']) {
      const { code, stderr } = await runCli(['serve', '--port', port, '--host', '192.0.2.1', '--storage', 'memory'])
      expect([port, code, stderr]).toEqual([port, 2, 'sandbox: cannot listen on --host 192.0.2.1 (EADDRNOTAVAIL): give an address of this machine, e.g. 127.0.0.1, or 0.0.0.0 for every interface\n'])
    }
  })

  // Written as in a URL, these were looked up as names ("(ENOTFOUND)"), which told nothing of the fix.
  it('refuses a --host written with brackets, a port or a scheme, saying how to write it', async () => {
    for (const [host, message] of [
      ['[::1]', 'sandbox: invalid --host "[::1]": write an IPv6 address without brackets (::1)\n'],
      ['127.0.0.1:4010', 'sandbox: invalid --host "127.0.0.1:4010": give the port with --port (--host 127.0.0.1 --port 4010)\n'],
      ['http://127.0.0.1:4010', 'sandbox: invalid --host "http://127.0.0.1:4010": give a host name or address, not a URL\n'],
    ]) {
      const { code, stderr } = await runCli(['serve', '--port', '0', '--host', host!, '--storage', 'memory'])
      expect([host, code, stderr]).toEqual([host, 2, message])
    }
  })

  it('exits 2 on bad flags, config and keys files', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    const badConfig = join(dir, 'config.json')
    await writeFile(badConfig, '{"risk":{"max_ltv_percent":"high"}}')
    const typoConfig = join(dir, 'typo.json')
    await writeFile(typoConfig, '{"ratez":{"btc_usd":1},"risk":{"max_ltv":40}}')
    await writeFile(join(dir, 'empty.json'), '')
    const twiceConfig = join(dir, 'twice.json')
    await writeFile(twiceConfig, '{\n  "rates": {\n    "btc_usd": 60000,\n    "btc_usd": 50000\n  }\n}\n')
    const cases: Array<[string[], RegExp]> = [
      [['--rate-limit', 'fast'], /rate-limit/],
      [['--port', 'x'], /^sandbox: invalid --port "x": expected a port from 0 to 65535 \(0 = any free port\)\n$/],
      [['--storage', 'sqlite'], /use fs, memory or a redis:\/\/ URL/],
      [['--config', join(dir, 'missing.json')], /cannot read --config/],
      [['--config', badConfig], /max_ltv_percent/],
      [['--config', typoConfig], /--config \S+typo\.json is not a valid sandbox config: unknown keys ratez \(did you mean rates\?\), risk\.max_ltv \(see GET \/api\/sandbox\/config for the keys\)/],
      [['--config', twiceConfig], /^sandbox: --config \S+twice\.json: rates\.btc_usd: duplicate key "btc_usd" \(lines 3 and 4\): JSON keeps only the last one, so the first would be ignored\n$/],
      [['--keys', join(dir, 'none.json')], /sandbox keys create/],
      [['--webhook-forward-to', 'localhost:3000'], /--webhook-forward-to must be an http\(s\) URL, not localhost:/],
      [['--webhook-forward-to', 'not a url'], /--webhook-forward-to "not a url" is not a URL/],
      [['--keys', badConfig], /^sandbox: keys file \S+config\.json is not a sandbox keys file/],
      [['--keys', typoConfig.replace('typo.json', 'empty.json')], /^sandbox: keys file \S+empty\.json: is empty; delete it/],
      [['--storage', 'fs', '--data-dir', badConfig], /not a writable directory/],
      // Under /proc a recursive mkdir never fails: Node's looped at full CPU, and serve never started or stopped.
      ...(existsSync('/proc/self') ? [[['--storage', 'fs', '--data-dir', '/proc/sandbox-none/data'], /^sandbox: data dir \/proc\/sandbox-none\/data is not a writable directory \(ENOENT\)/] as [string[], RegExp]] : []),
      [['--webhook-retry-schedule', '5s,,30s'], /--webhook-retry-schedule: invalid retry schedule "5s,,30s"/],
      // An empty value (a variable that is not set) is refused, not read as the default.
      [['--webhook-retry-schedule', ''], /--webhook-retry-schedule needs a value, got an empty string/],
      [['--config', ''], /--config needs a value, got an empty string/],
      [['--webhook-forward-to', ''], /--webhook-forward-to needs a value/],
    ]
    for (const [args, message] of cases) {
      const { code, stderr } = await runCli(['serve', '--port', '0', ...args])
      expect(code, args.join(' ')).toBe(2)
      expect(stderr).toMatch(message)
    }
  })

  it('refuses a second server on the same data dir with exit 2, and takes over from one killed with -9', async () => {
    const dataDir = await tempDir()
    const first = await startServe(['--port', '0', '--quiet', '--data-dir', dataDir])
    const second = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
    expect(second.code).toBe(2)
    expect(second.stderr).toContain(`data dir ${dataDir} is in use by another sandbox server (pid ${first.child.pid}, since `)
    expect(second.stderr).toContain(`If no server runs there, delete ${join(dataDir, 'server.lock')}`)
    // The first one was not disturbed.
    expect((await fetch(`${first.url}/api/sandbox/loans`, { headers: auth })).status).toBe(200)
    await first.stop('SIGKILL')
    const third = await startServe(['--port', '0', '--quiet', '--data-dir', dataDir])
    expect((await fetch(`${third.url}/api/sandbox/loans`, { headers: auth })).status).toBe(200)
    expect(await third.stop()).toBe(0)
  })

  it('keeps state on fs storage across a restart, and honours --config and env vars', async () => {
    const dataDir = await tempDir()
    const configFile = join(dataDir, 'override.json')
    await writeFile(configFile, JSON.stringify({ rates: { btc_usd: 100000 } }))
    const first = await startServe(['--port', '0', '--quiet', '--config', configFile], { env: { SANDBOX_DATA_DIR: dataDir } })
    expect(first.output()).toContain(`storage fs ${dataDir}`)
    const created = await post(first.url, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'persist-1')
    const loan = (await created.json()).activeLoans[0]
    expect(loan.ltv).toBe(40)
    expect(await first.stop()).toBe(0)

    const second = await startServe(['--port', '0', '--quiet', '--data-dir', dataDir])
    const state = await (await fetch(`${second.url}/api/sandbox/loans`, { headers: auth })).json()
    expect(state.activeLoans.map((item: { id: string }) => item.id)).toEqual([loan.id])
    const replay = await post(second.url, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'persist-1')
    expect((await replay.json()).idempotency_replayed).toBe(true)
    await second.stop()
  })

  it('prints JSON lines with --json-logs', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--json-logs'])
    await fetch(`${serve.url}/api/sandbox/nothing`, { headers: auth })
    await waitUntil(() => serve.output().includes('"event":"request"'), 10_000, 'the request line')
    const lines = serve.output().trim().split('\n').map((line) => JSON.parse(line))
    expect(lines[0]).toMatchObject({ event: 'ready', url: serve.url })
    expect(lines[1]).toMatchObject({ event: 'request', status: 404, error_code: 'NOT_FOUND' })
    await serve.stop()
  })

  it('names --json-logs\' ready fields in snake_case, as its other lines, keeping rate_limit\'s windowSeconds of earlier versions', async () => {
    for (const [flag, limit] of [['30/10', { limit: 30, window_seconds: 10, windowSeconds: 10 }], ['off', null]] as const) {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--json-logs', '--rate-limit', flag])
      const ready = JSON.parse(serve.output().trim().split('\n')[0]!) as Record<string, unknown>
      expect(ready).toMatchObject({ event: 'ready', rate_limit: limit })
      expect(await serve.stop()).toBe(0)
    }
  })

  it('prints no request or delivery lines with --quiet, JSON or not, and masks a forward URL\'s password otherwise', async () => {
    const dead = createServer()
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
    const port = (dead.address() as { port: number }).port
    await new Promise((resolve) => dead.close(resolve))
    for (const json of [[], ['--json-logs']]) {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet', ...json, '--webhook-forward-to', `http://127.0.0.1:${port}/gone`])
      await new Promise((resolve) => setTimeout(resolve, 100))
      const atStart = serve.output().length
      expect((await post(serve.url, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, `quiet-${json.length}`)).status).toBe(200)
      // The refused delivery attempt happens at once; its line would be out by now.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect([json, serve.output().slice(atStart)]).toEqual([json, ''])
      await serve.stop()
    }
    // Without --quiet, a forward URL's password is masked wherever serve prints the URL.
    for (const json of [[], ['--json-logs']]) {
      const serve = await startServe(['--port', '0', '--storage', 'memory', ...json, '--webhook-forward-to', `http://hook:s3cretpw@127.0.0.1:${port}/gone`])
      expect((await post(serve.url, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, `masked-${json.length}`)).status).toBe(200)
      await waitUntil(() => /webhook.*sandbox\.loan\.issued/.test(serve.output()), 5000, 'the delivery line')
      expect(serve.output()).not.toContain('s3cretpw')
      expect(serve.output()).toContain('hook:***@127.0.0.1')
      await serve.stop()
    }
  })
})
