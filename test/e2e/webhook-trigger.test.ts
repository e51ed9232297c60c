import { createServer } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { addKey } from '../../src/keys/manage-keys.js'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil, type ServeProcess } from '../helpers/cli.js'
import { KEY, PTY_UNAVAILABLE, killPtys, runInPty } from '../helpers/pty.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-trigger')
const KEY_A = 'sk_sandbox_trigger_e2e_key_aaaaaaaa'
const EVENT_LIST = 'sandbox.loan_application.updated, sandbox.loan.issued, sandbox.loan.updated, sandbox.repayment.updated, sandbox.repayment.settled, sandbox.collateral.returned, sandbox.partner.updated, sandbox.webhook.test'

let receiver: TestReceiver
let serve: ServeProcess
let secret: string
beforeAll(async () => {
  receiver = await startReceiver('/hooks')
  serve = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', receiver.url, '--webhook-retry-schedule', '100ms,100ms'])
  secret = /signed with (whsec_\S+)/.exec(serve.output())![1]!
})
afterEach(() => {
  receiver.respond = () => 200
  killPtys()
})
afterAll(async () => {
  await serve?.stop()
  await receiver?.close()
  killAll()
})

const trigger = (args: string[]) => runCli(['webhook', 'trigger', '--base-url', serve.url, ...args])

describe('sandbox webhook trigger', () => {
  it('walks a repayment on a new loan and the forward receiver gets every event, signed, in order', async () => {
    const before = receiver.received.length
    const { code, stdout, stderr } = await trigger(['repayment.settled', '--api-key', KEY_A, '--wait'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines[0]).toBe(`triggering sandbox.repayment.settled on ${serve.url} (key sk_sandbox_trig…aaaa)`)
    expect(lines.slice(1, 9).map((line) => line.replace(/loan_\w+/, 'LOAN'))).toEqual([
      '  200 GET /api/sandbox/config',
      '  200 GET /api/sandbox/loans',
      '  200 POST /api/sandbox/loans  → sandbox.loan.issued',
      '  200 POST /api/sandbox/loans/LOAN/repayment-flow start_payment  → sandbox.repayment.updated',
      '  200 POST /api/sandbox/loans/LOAN/repayment-flow confirm_usdt  → sandbox.repayment.updated',
      '  200 POST /api/sandbox/loans/LOAN/repayment-flow run_kyt  → sandbox.repayment.updated',
      '  200 POST /api/sandbox/loans/LOAN/repayment-flow complete_settlement  → sandbox.repayment.settled',
      expect.stringMatching(/^deliveries queued, after \d+\.\d s:$/),
    ])
    expect(lines.slice(9)).toHaveLength(5)
    for (const line of lines.slice(9)) expect(line).toMatch(new RegExp(`^  whd_\\w+  sandbox\\.\\S+ +forward ${receiver.url}  ✓ delivered \\(200, 1 attempt\\)$`))
    const received = (await receiver.waitFor(before + 5)).slice(before)
    expect(received.map((entry) => JSON.parse(entry.body).type)).toEqual(['sandbox.loan.issued', 'sandbox.repayment.updated', 'sandbox.repayment.updated', 'sandbox.repayment.updated', 'sandbox.repayment.settled'])
    for (const entry of received) verifyWebhook({ secret, body: entry.body, headers: entry.headers })
  })

  it('serve prints a trigger command for its own URL that works as printed', async () => {
    const hint = /^webhooks: to send one now, in another terminal: sandbox (webhook trigger loan\.issued --base-url (\S+))$/m.exec(serve.output())
    expect(hint?.[2]).toBe(serve.url)
    const before = receiver.received.length
    expect((await runCli(hint![1]!.split(' '))).code).toBe(0)
    expect(JSON.parse((await receiver.waitFor(before + 1))[before]!.body).type).toBe('sandbox.loan.issued')
  })

  it('--json prints the report; a receiver that keeps refusing fails --wait with exit 1', async () => {
    receiver.respond = () => 500
    const { code, stdout, stderr } = await trigger(['sandbox.partner.updated', '--api-key', KEY_A, '--wait', '5s', '--json'])
    expect(code).toBe(1)
    const report = JSON.parse(stdout)
    expect(report).toMatchObject({
      event: 'sandbox.partner.updated',
      requests: [{ method: 'GET', path: '/api/sandbox/partner', status: 200, events: [] }, { method: 'POST', path: '/api/sandbox/partner', status: 200, events: ['sandbox.partner.updated'] }],
      endpoint: null,
      deliveries: [{ event_type: 'sandbox.partner.updated', target: 'forward', url: receiver.url, status: 'failed', attempts: 3, last_status_code: 500 }],
    })
    // Named by its delivery id, which retry takes, and its receiver: the event id is shared by every target.
    const id = report.deliveries[0].id as string
    expect(stderr).toMatch(new RegExp(`^sandbox: 1 of 1 not delivered after [\\d.]+ s: the first, ${id} \\(sandbox\\.partner\\.updated to forward ${receiver.url}\\), is failed \\(last answer: 500\\); once the receiver answers 2xx, sandbox webhook retry ${id} sends it again\n$`))
  })

  it('--verbose prints every request and answer with the key masked (on stderr with --json)', async () => {
    const text = await trigger(['partner.updated', '--api-key', KEY_A, '--verbose'])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`    > POST ${serve.url}/api/sandbox/partner\n`)
    expect(text.stdout).toContain('    > authorization: Bearer sk_sandbox_trig…aaaa\n')
    expect(text.stdout).not.toContain(KEY_A)
    const json = await trigger(['partner.updated', '--api-key', KEY_A, '--verbose', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ event: 'sandbox.partner.updated', problem: null })
    expect(json.stderr).toContain(`sandbox:     > POST ${serve.url}/api/sandbox/partner\n`)
  })

  it('on a local server, uses a fixed key when none is given; a key-registering server refuses it with advice', async () => {
    const local = await trigger(['loan.issued'])
    expect(local.code).toBe(0)
    expect(local.stdout).toMatch(/^triggering sandbox\.loan\.issued on .* \(key sk_sandbox_webh…ocal, the default for a local server\)$/m)
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    await addKey(keysFile, { label: 'ci' })
    const strict = await startServe(['--port', '0', '--storage', 'memory', '--keys', keysFile])
    try {
      const refused = await runCli(['webhook', 'trigger', 'loan.issued', '--base-url', strict.url])
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: the server refused the key: GET \/api\/sandbox\/webhooks answered 401 \w+: .*: this server takes registered keys only, give one with --api-key \(sandbox keys list\)\n$/) })
    } finally {
      await strict.stop()
    }
  })

  it('says when it waits out a rate limit, as run does (on stderr with --json)', async () => {
    const limited = await startServe(['--port', '0', '--storage', 'memory', '--rate-limit', '1/1'])
    try {
      const text = await runCli(['webhook', 'trigger', 'partner.updated', '--base-url', limited.url])
      expect(text.stdout).toMatch(/^    429 rate limited: waiting \d+ (ms|s), then (GET|POST) \/api\/sandbox\/\w+ again/m)
      const json = await runCli(['webhook', 'trigger', 'partner.updated', '--base-url', limited.url, '--json'])
      expect(JSON.parse(json.stdout)).toMatchObject({ event: 'sandbox.partner.updated' })
      expect(json.stderr).toMatch(/^sandbox: 429 rate limited: waiting \d+ (ms|s), then (GET|POST) \/api\/sandbox\/\w+ again/m)
    } finally {
      await limited.stop()
    }
  })

  it('setup mistakes exit 2 before any request: an unknown event, no event off a terminal, a loan for an event that opens its own', async () => {
    expect(await trigger(['loan.exploded'])).toMatchObject({ code: 2, stderr: `sandbox: unknown event "loan.exploded": one of ${EVENT_LIST}\n` })
    expect(await trigger([])).toMatchObject({ code: 2, stderr: `sandbox: name the event to trigger: one of ${EVENT_LIST}\n` })
    // Checked before the `triggering ...` line, which a usage error does not follow on stdout.
    expect(await trigger(['loan.issued', '--loan', 'loan_1'])).toMatchObject({ code: 2, stdout: '', stderr: 'sandbox: a loan applies only to sandbox.loan.updated, sandbox.repayment.updated, sandbox.repayment.settled, sandbox.collateral.returned; sandbox.loan.issued opens a loan of its own\n' })
    // The key is asked for before any request: the host is never looked up.
    expect(await runCli(['webhook', 'trigger', 'loan.issued', '--base-url', 'https://sandbox.test'], { env: { SANDBOX_API_KEY: '' } })).toMatchObject({ code: 2, stderr: 'sandbox: give the API key for https://sandbox.test with --api-key or SANDBOX_API_KEY\n' })
    expect(await trigger(['webhook.test', '--wait', 'soon'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: --wait: .*[^t]\n$/) })
    expect(await trigger(['--wait', 'loan.issued'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: --wait: .*; "loan\.issued" is not a duration: put it before --wait, or give --wait one \(--wait 10s\)\n$/) })
  })

  it('--timeout gives up on a server that never answers after 4 attempts of that long each (exit 2)', async () => {
    const hanging = createNetServer((socket) => socket.on('error', () => {}))
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
      const { code, stdout, stderr } = await runCli(['webhook', 'trigger', 'loan.issued', '--base-url', url, '--timeout', '200ms'])
      expect(code).toBe(2)
      expect(stdout.match(/^ {4}network error \(no answer within 0\.2 s\): waiting \d+ ms, then GET \/api\/sandbox\/webhooks again \(attempt [234] of 4\)$/gm)).toHaveLength(3)
      expect(stderr).toBe(`sandbox: cannot reach ${url}/api/sandbox/webhooks (timed out after 4 attempts of 0.2 s each); is the server running? (sandbox serve, or --base-url for another one)\n`)
    } finally {
      hanging.close()
    }
    expect(await trigger(['loan.issued', '--timeout', 'soon'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: --timeout: invalid duration "soon"/) })
  })

  it('names the server that cannot be reached, and the test event\'s missing endpoint (exit 2)', async () => {
    const port = await findClosedPort()
    const down = await runCli(['webhook', 'trigger', 'loan.issued', '--base-url', `http://127.0.0.1:${port}`, '--json'])
    expect(down.code).toBe(2)
    expect(JSON.parse(down.stdout)).toEqual({ error: { code: 'UNREACHABLE', message: expect.stringMatching(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/webhooks \(ECONNREFUSED\) after 4 attempts; is the server running\? \(sandbox serve, or --base-url for another one\)$/) } })
    const test = await trigger(['webhook.test', '--api-key', KEY_A])
    expect(test).toMatchObject({ code: 2, stderr: 'sandbox: POST /api/sandbox/webhooks/test answered 409 WEBHOOK_ENDPOINT_REQUIRED: Configure a webhook endpoint first with POST /api/sandbox/webhooks. (the test event goes only to the key\'s endpoint; serve\'s --webhook-forward-to URL gets every other event type)\n' })
    expect(test.stdout).toMatch(/^  409 POST \/api\/sandbox\/webhooks\/test$/m)
  })

  it('a base URL that reaches a running server the wrong way is setup (exit 2) with its fix, as in run', async () => {
    const port = new URL(serve.url).port
    // https:// to this plain-HTTP server: it is running, so no "is the server running?".
    const https = await runCli(['webhook', 'trigger', 'partner.updated', '--base-url', `https://127.0.0.1:${port}`])
    expect(https).toMatchObject({ code: 2, stderr: `sandbox: cannot reach https://127.0.0.1:${port}/api/sandbox/webhooks: the server there answers plain HTTP, not TLS (ERR_SSL_WRONG_VERSION_NUMBER); use http:// rather than https:// (http://127.0.0.1:${port})\n` })
    // A redirect (a moved base URL) is not the API refusing a request.
    const mover = createServer((_request, response) => response.writeHead(301, { location: `${serve.url}/api/sandbox/webhooks` }).end())
    await new Promise<void>((resolve) => mover.listen(0, '127.0.0.1', resolve))
    try {
      const moved = `http://127.0.0.1:${(mover.address() as { port: number }).port}`
      const redirected = await runCli(['webhook', 'deliveries', '--base-url', moved, '--json'])
      expect(redirected.code).toBe(2)
      expect(JSON.parse(redirected.stdout)).toEqual({ error: { code: 'UNREACHABLE', message: `GET /api/sandbox/webhooks answered 301: a redirect to ${serve.url}/api/sandbox/webhooks (not followed; use the URL it names as the base URL)` } })
    } finally {
      await new Promise((resolve) => mover.close(resolve))
    }
    // http:// to a TLS server: its 400 says to use https://; not the API refusing the walk.
    const tls = join(import.meta.dirname, '../fixtures/tls')
    const secure = await startServe(['--port', '0', '--storage', 'memory', '--tls-cert', join(tls, 'cert.pem'), '--tls-key', join(tls, 'key.pem')])
    try {
      const plain = secure.url.replace(/^https:/, 'http:')
      expect(await runCli(['webhook', 'retry', '--base-url', plain])).toMatchObject({ code: 2, stderr: `sandbox: POST /api/sandbox/webhooks/retry answered 400 INVALID_REQUEST: This server answers https only: send the request to ${secure.url}.\n` })
    } finally {
      await secure.stop()
    }
  })

  it('acts on --loan, and a refused step exits 1 with the API\'s answer and what to do', async () => {
    const opened = JSON.parse((await trigger(['loan.issued', '--api-key', KEY_A, '--json'])).stdout)
    const loanId = JSON.parse(receiver.received.at(-1)!.body).data.object.id as string
    expect(opened.deliveries.at(-1).event_id).toBe(JSON.parse(receiver.received.at(-1)!.body).id)
    const closed = await trigger(['collateral.returned', '--api-key', KEY_A, '--loan', loanId, '--wait'])
    expect(closed.code).toBe(0)
    expect(closed.stdout).toContain(`  200 POST /api/sandbox/loans/${loanId}/action repay_principal  → sandbox.loan.updated, sandbox.collateral.returned`)
    const gone = await trigger(['loan.updated', '--api-key', KEY_A, '--loan', loanId])
    expect(gone).toMatchObject({ code: 2, stderr: `sandbox: this key has no active loan ${loanId} (GET /api/sandbox/loans lists them)\n` })
    // An application the key left open: the walk's first step is refused.
    const key = 'sk_sandbox_trigger_e2e_key_bbbbbbbb'
    await runCli(['webhook', 'trigger', 'loan_application.updated', '--base-url', serve.url, '--api-key', key])
    const draft = await fetch(`${serve.url}/api/sandbox/loans/flow`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'draft-1' }, body: JSON.stringify({ action: 'start_collateral_transfer', collateral_btc: 0.01, loan_amount: 100 }) })
    expect(draft.status).toBe(200)
    const refused = await trigger(['loan_application.updated', '--api-key', key])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(/^  409 POST \/api\/sandbox\/loans\/flow start_collateral_transfer$/m)
    expect(refused.stderr).toMatch(/^sandbox: POST \/api\/sandbox\/loans\/flow \(start_collateral_transfer\) answered 409 FLOW_CONFLICT: .*[^.]; the key's state is in the way \(an application or repayment it left open: .*sandbox keys reset KEY for a registered key, or another key\n$/)
  })
})

describe('sandbox webhook deliveries and retry', () => {
  it('lists a delivery the receiver refused, retries it by id once the receiver is back, and waits for it', async () => {
    const key = 'sk_sandbox_trigger_e2e_key_cccccccc'
    receiver.respond = () => 500
    const failed = await trigger(['partner.updated', '--api-key', key, '--wait'])
    expect(failed.code).toBe(1)
    const listed = await runCli(['webhook', 'deliveries', '--base-url', serve.url, '--api-key', key, '--status', 'failed'])
    expect(listed.code).toBe(0)
    const lines = listed.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe("no endpoint (POST /api/sandbox/webhooks registers one); deliveries to serve's --webhook-forward-to URL show here too")
    // The line ends with the request that queued it, the id `sandbox logs` shows for that request.
    expect(lines.slice(1)).toEqual([expect.stringMatching(new RegExp(`^  \\d\\d:\\d\\d:\\d\\d whd_\\w+  sandbox\\.partner\\.updated +forward ${receiver.url}  ✗ failed \\(500, 3 attempts\\)  req_\\w+$`))])
    const id = /whd_\w+/.exec(lines[1]!)![0]
    expect((await runCli(['webhook', 'deliveries', '--base-url', serve.url, '--api-key', key, '--status', 'delivered'])).stdout).toContain('no delivered delivery among the 50 newest')

    receiver.respond = () => 200
    const retried = await runCli(['webhook', 'retry', id, '--base-url', serve.url, '--api-key', key, '--wait', '5s'])
    expect(retried).toMatchObject({ code: 0, stderr: '' })
    expect(retried.stdout).toMatch(new RegExp(`^retried 1 delivery, after [\\d.]+ s:\n  ${id}  sandbox\\.partner\\.updated +forward ${receiver.url}  ✓ delivered \\(200, 4 attempts\\)\n$`))
    expect(JSON.parse(receiver.received.at(-1)!.body).type).toBe('sandbox.partner.updated')
    const json = await runCli(['webhook', 'deliveries', '--base-url', serve.url, '--api-key', key, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ endpoint: null, deliveries: [{ id, status: 'delivered', attempts: 4 }] })
    // Nothing failed is left; a delivered id is the server's 404, a usage error here.
    expect(await runCli(['webhook', 'retry', '--base-url', serve.url, '--api-key', key])).toMatchObject({ code: 0, stdout: 'no failed delivery to retry\n' })
    expect(await runCli(['webhook', 'retry', id, '--base-url', serve.url, '--api-key', key])).toMatchObject({ code: 2, stderr: `sandbox: POST /api/sandbox/webhooks/retry answered 404 WEBHOOK_DELIVERY_NOT_FOUND: No retryable delivery ${id} (unknown, or already delivered). (sandbox webhook deliveries lists them)\n` })
    expect(await runCli(['webhook', 'deliveries', '--base-url', serve.url, '--status', 'lost'])).toMatchObject({ code: 2, stderr: expect.stringContaining('sandbox: --status: invalid value "lost": expected one of pending, delivered, retrying, failed\n') })
  })
  it('names the retried deliveries older than the 50 the log shows, and --wait fails on them rather than passing blind', async () => {
    const key = 'sk_sandbox_trigger_e2e_key_dddddddd'
    receiver.respond = () => 500
    expect((await trigger(['partner.updated', '--api-key', key, '--wait'])).code).toBe(1)
    expect((await trigger(['partner.updated', '--api-key', key, '--wait'])).code).toBe(1)
    const failed = JSON.parse((await runCli(['webhook', 'deliveries', '--base-url', serve.url, '--api-key', key, '--status', 'failed', '--json'])).stdout).deliveries.map((delivery: { id: string }) => delivery.id) as string[]
    expect(failed).toHaveLength(2)
    receiver.respond = () => 200
    const before = receiver.received.length
    for (let index = 0; index < 50; index++) {
      const answer = await fetch(`${serve.url}/api/sandbox/partner`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `push-${index}` }, body: JSON.stringify({ name: `Push ${index}` }) })
      expect(answer.status).toBe(200)
    }
    await receiver.waitFor(before + 50)
    const waited = await runCli(['webhook', 'retry', failed[0]!, '--base-url', serve.url, '--api-key', key, '--wait', '2s'])
    expect(waited).toMatchObject({ code: 1, stderr: `sandbox: 1 of 1 retried is older than the 50 newest deliveries the log shows, so their outcome cannot be seen: ${failed[0]}\n` })
    const text = await runCli(['webhook', 'retry', failed[1]!, '--base-url', serve.url, '--api-key', key])
    expect(text).toMatchObject({ code: 0, stdout: `retried 1 delivery:\n  older than the 50 newest deliveries the log shows: ${failed[1]}\n` })
  })

  it('refuses more than 50 ids, or an empty one, as a usage error before any request', async () => {
    const many = Array.from({ length: 51 }, (_, index) => `whd_${index}`)
    const tooMany = await runCli(['webhook', 'retry', ...many, '--base-url', serve.url, '--json'])
    expect(tooMany.code).toBe(2)
    expect(JSON.parse(tooMany.stdout)).toEqual({ error: { code: 'USAGE', message: 'at most 50 delivery ids at a time (the retry endpoint\'s limit), got 51: retry them in batches of 50' } })
    expect(await runCli(['webhook', 'retry', '', '--base-url', serve.url])).toMatchObject({ code: 2, stderr: expect.stringContaining('sandbox: a delivery id is an empty string (an unset shell variable?)') })
  })
})

describe('sandbox webhook deliveries --follow', () => {
  it('prints each new delivery and each new attempt until Ctrl+C (exit 0); with --json one delivery per line', async () => {
    const key = 'sk_sandbox_trigger_e2e_key_dddddddd'
    const args = ['--base-url', serve.url, '--api-key', key]
    const follow = await startNodeProcess([BIN, 'webhook', 'deliveries', '--follow', ...args], /^(no endpoint)/m)
    receiver.respond = () => 500
    expect((await trigger(['partner.updated', '--api-key', key, '--wait'])).code).toBe(1)
    // The 100 ms schedule: 3 attempts in ~0.2 s, read every 2 s; the last read shows it failed.
    await waitUntil(() => /✗ failed \(500, 3 attempts\) {2}req_\w+$/m.test(follow.output()), 10_000, 'the failed delivery')
    const json = await startNodeProcess([BIN, 'webhook', 'deliveries', '--follow', '--json', '--status', 'failed', ...args], /"status":"failed"/)
    const lines = follow.output().trimEnd().split('\n')
    expect(lines.slice(1).every((line) => /^ {2}\d\d:\d\d:\d\d whd_\w+ {2}sandbox\.partner\.updated +forward .* req_\w+$/.test(line))).toBe(true)
    expect(await follow.stop('SIGINT')).toBe(0)
    expect(await json.stop('SIGTERM')).toBe(0)
    // Only failed deliveries, one JSON object per line.
    expect(json.output().trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ event_type: 'sandbox.partner.updated', status: 'failed', attempts: 3 })])
  })

  it('stops cleanly (exit 0) on a signal sent as soon as its first line is out, as a supervisor or a quick Ctrl+C does', async () => {
    const args = ['--base-url', serve.url, '--api-key', 'sk_sandbox_trigger_e2e_key_eeeeeeee']
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const follow = await startNodeProcess([BIN, 'webhook', 'deliveries', '--follow', ...args], /^(no endpoint)/m)
      expect(await follow.stop(signal)).toBe(0)
    }
  })
})

describe('sandbox webhook deliveries --follow on a key at its rate limit', () => {
  it('waits out the 429s its own reads meet, says so once, and goes on following', async () => {
    // A window of 6 s against reads every 2 s: at least two reads in a row meet the 429, and the note is still said once.
    const limited = await startServe(['--port', '0', '--storage', 'memory', '--rate-limit', '4/6'])
    try {
      const key = 'sk_sandbox_trigger_e2e_key_limited0'
      const follow = await startNodeProcess([BIN, 'webhook', 'deliveries', '--follow', '--base-url', limited.url, '--api-key', key], /^(no endpoint)/m)
      // The partner's own requests use up the key's window: the next reads of the log get 429.
      for (let i = 0; i < 4; i++) await fetch(`${limited.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })
      await waitUntil(() => /answered 429 SANDBOX_RATE_LIMIT_EXCEEDED: .*[^.]; still following, every 2 s$/m.test(follow.output()), 10_000, 'the rate limit note')
      await waitUntil(() => /reading the delivery log again$/m.test(follow.output()), 10_000, 'a read after the window')
      expect(follow.output().match(/still following/g)).toHaveLength(1)
      expect(await follow.stop('SIGINT')).toBe(0)
    } finally {
      await limited.stop()
    }
  })
})

describe('sandbox webhook retry after an outage', () => {
  it('without ids, names the deliveries still retrying on their schedule, and sends them when named', async () => {
    const down = await startReceiver('/hooks')
    down.respond = () => 503
    const slow = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', down.url, '--webhook-retry-schedule', '10m'])
    try {
      const args = ['--base-url', slow.url, '--api-key', KEY_A]
      expect((await runCli(['webhook', 'trigger', 'partner.updated', ...args, '--wait', '1s'])).code).toBe(1)
      const id = JSON.parse((await runCli(['webhook', 'deliveries', ...args, '--status', 'retrying', '--json'])).stdout).deliveries[0].id as string
      const hinted = await runCli(['webhook', 'retry', ...args])
      expect(hinted).toMatchObject({ code: 0, stdout: `no failed delivery to retry\n1 delivery is still retrying on the schedule (without ids, only failed ones are put back); to send it now: sandbox webhook retry ${id}\n` })
      down.respond = () => 200
      // The receiver is back, but a new event waits behind the retrying one: the wait ends at once and says which to retry.
      const behind = await runCli(['webhook', 'trigger', 'loan.issued', ...args, '--wait', '30s'])
      expect(behind.code).toBe(1)
      expect(behind.stderr).toMatch(new RegExp(`is pending behind ${id} \\(sandbox\\.partner\\.updated\\), an earlier delivery to the same receiver, retrying \\(last answer: 503; next attempt at [^)]+\\): deliveries to one receiver go in event order; sandbox webhook retry ${id} sends that one now`))
      const listed = await runCli(['webhook', 'deliveries', ...args])
      expect(listed.stdout).toMatch(new RegExp(`\\n1 pending delivery waits behind ${id} \\(retrying, next attempt at \\d\\d:\\d\\d:\\d\\d\\), as deliveries to one receiver go in event order; sandbox webhook retry ${id} sends it now, and they follow\\n$`))
      expect((await runCli(['webhook', 'deliveries', ...args, '--status', 'retrying'])).stdout).not.toContain('waits behind')
      const sent = await runCli(['webhook', 'retry', id, ...args, '--wait'])
      expect(sent.code).toBe(0)
      expect(sent.stdout).toContain(`${id}  sandbox.partner.updated`)
      expect(sent.stdout).toContain('✓ delivered (200, 2 attempts)')
      expect(sent.stdout).not.toContain('still retrying')
      // What the hints said: the one behind it followed.
      await waitUntil(() => down.received.some((entry) => JSON.parse(entry.body).type === 'sandbox.loan.issued'), 10_000, 'the delivery that waited')
      expect((await runCli(['webhook', 'deliveries', ...args])).stdout).not.toContain('waits behind')
    } finally {
      await slow.stop()
      await down.close()
    }
  })
})

describe.skipIf(PTY_UNAVAILABLE !== '')('sandbox webhook trigger on a terminal', () => {
  it('asks which event when none is named, and Ctrl+C there exits 130', async () => {
    const pty = runInPty(['webhook', 'trigger', '--base-url', serve.url])
    await pty.waitFor('Which event?')
    await pty.press(KEY.down, '❯ sandbox.loan.issued')
    pty.write(KEY.enter)
    expect(await pty.exited()).toBe(0)
    expect(pty.text()).toMatch(/200 POST \/api\/sandbox\/loans {2}→ sandbox\.loan\.issued/)
    const quit = runInPty(['webhook', 'trigger', '--base-url', serve.url])
    await quit.waitFor('Which event?')
    quit.write(KEY.ctrlC)
    expect(await quit.exited()).toBe(130)
    expect(quit.text()).not.toMatch(/sandbox: |^\s+at /m)
  })

  it.skipIf(PTY_UNAVAILABLE !== '')('refuses a bad flag on a terminal before asking which event, not after', async () => {
    const cases: Array<[string[], string]> = [
      [['--timeout', 'abc'], 'sandbox: --timeout: invalid duration "abc"'],
      [['--base-url', 'localhost:4010'], 'sandbox: --base-url must be an http(s) URL, got "localhost:4010"'],
      [['--base-url', serve.url, '--api-key', 'pk_live_1'], 'sandbox: --api-key must be a sandbox key (sk_sandbox_...), got "pk_live_1"'],
    ]
    const runs = cases.map(([args, message]) => [args, message, runInPty(['webhook', 'trigger', ...args])] as const)
    for (const [args, message, pty] of runs) {
      expect(await pty.exited(5000), args.join(' ')).toBe(2)
      expect(pty.text(), args.join(' ')).not.toContain('Which event?')
      expect(pty.text(), args.join(' ')).toContain(message)
    }
  })
})
