import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { createRequestLog } from '../../src/server/request-log.js'
import { createSandboxStorage } from '../../src/storage/create-storage.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-keys-e2e')

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until `sandbox logs` shows `count` requests of the data dir: serve writes its log every
 * 500 ms, and a fixed wait for that flush failed on a busy machine.
 */
async function waitForLoggedRequests(dir: string, count: number): Promise<void> {
  for (const until = performance.now() + 15_000; performance.now() < until; await wait(100)) {
    const { code, stdout } = await runCli(['logs', '--data-dir', dir, '--json'])
    if (code === 0 && stdout.trim().split('\n').filter(Boolean).length >= count) return
  }
  throw new Error(`sandbox logs did not show ${count} requests within 15 s`)
}

/** Waits until `read()` holds `lines` lines (a follower's output), up to 15 s. */
async function waitForLines(read: () => string, lines: number): Promise<void> {
  for (const until = performance.now() + 15_000; performance.now() < until; await wait(50)) {
    if (read().trim().split('\n').filter(Boolean).length >= lines) return
  }
}

async function statusOf(url: string, key: string): Promise<[number, string | null]> {
  const response = await fetch(`${url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })
  const body = await response.json()
  return [response.status, body.error_code ?? null]
}

describe('sandbox keys', () => {
  it('creates, lists, revokes and resets keys that a running server honours', async () => {
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const created = await runCli(['keys', 'create', '--keys', keysFile, '--label', 'ci', '--expires-in', '30d'])
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect(key).toMatch(/^sk_sandbox_[A-Za-z0-9]{32}$/)
    expect(created.stderr).toContain(keysFile)
    const other = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()

    const listed = await runCli(['keys', 'list', '--keys', keysFile, '--json'])
    const rows = JSON.parse(listed.stdout)
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatchObject({ label: 'ci', status: 'active' })
    expect(rows[0].key).not.toBe(key)
    expect(Date.parse(rows[0].expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000)
    const table = await runCli(['keys', 'list', '--keys', keysFile])
    expect(table.stdout).toMatch(/KEY\s+LABEL\s+STATUS/)

    const serve = await startServe(['--port', '0', '--quiet', '--keys', keysFile, '--data-dir', join(dir, 'data')])
    expect(serve.output()).toContain(`keys ${keysFile}`)
    expect(await statusOf(serve.url, key)).toEqual([200, null])
    expect(await statusOf(serve.url, 'sk_sandbox_not_registered_12345')).toEqual([401, 'SANDBOX_API_KEY_INVALID'])

    // State, then a reset: the key starts again from nothing.
    const made = await fetch(`${serve.url}/api/sandbox/loans`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'k1', 'content-type': 'application/json' },
      body: JSON.stringify({ collateral_btc: 0.1, loan_amount: 1000 }),
    })
    expect(made.status).toBe(200)
    expect((await runCli(['keys', 'reset', key, '--keys', keysFile, '--data-dir', join(dir, 'data')])).code).toBe(0)
    // serve reads the keys file again within 250 ms: polled, as a busy machine takes longer.
    await vi.waitFor(async () => {
      const fresh = await (await fetch(`${serve.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })).json()
      expect(fresh.activeLoans).toEqual([])
    }, { timeout: 10_000, interval: 100 })

    const dropped = await runCli(['keys', 'reset', key.slice(0, 20), '--drop', '--keys', keysFile, '--data-dir', join(dir, 'data')])
    expect(dropped.code).toBe(0)
    expect(dropped.stdout).toContain('SANDBOX_SESSION_REQUIRED')
    await vi.waitFor(async () => expect(await statusOf(serve.url, key)).toEqual([401, 'SANDBOX_SESSION_REQUIRED']), { timeout: 10_000, interval: 100 })

    const revoked = await runCli(['keys', 'revoke', other, '--keys', keysFile])
    expect(revoked.code).toBe(0)
    await vi.waitFor(async () => expect(await statusOf(serve.url, other)).toEqual([401, 'SANDBOX_API_KEY_INVALID']), { timeout: 10_000, interval: 100 })
    const again = JSON.parse((await runCli(['keys', 'list', '--keys', keysFile, '--json'])).stdout)
    expect(again.map((row: { status: string }) => row.status)).toEqual(['session_dropped', 'revoked'])
    // A reset gives a revoked key a fresh state, not access, and says so.
    const resetRevoked = await runCli(['keys', 'reset', other, '--keys', keysFile, '--data-dir', join(dir, 'data')])
    expect(resetRevoked).toMatchObject({ code: 0, stdout: expect.stringMatching(/ now starts from an empty sandbox state .*; it is revoked, so the server still answers it 401 SANDBOX_API_KEY_INVALID\n$/) })
    expect(await statusOf(serve.url, other)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    await serve.stop()
  })

  it('lists created and expiry times in UTC marked Z, in any time zone of the machine', async () => {
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const env = { TZ: 'Asia/Kathmandu' }
    expect((await runCli(['keys', 'create', '--keys', keysFile, '--expires-at', '2027-01-31T00:00:00Z'], { env })).code).toBe(0)
    const table = await runCli(['keys', 'list', '--keys', keysFile], { env })
    const [{ created_at: created }] = JSON.parse((await runCli(['keys', 'list', '--keys', keysFile, '--json'], { env })).stdout)
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`\\s${created.slice(0, 19)}Z\\s+2027-01-31T00:00:00Z$`))
  })

  it('lists a hand-written time with an offset, or a date alone, as the UTC instant it names', async () => {
    // The offset was cut off and Z put in its place: +09:00's 20:00 showed as 20:00Z, nine hours late.
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    await writeFile(keysFile, JSON.stringify({ version: 1, keys: [
      { key: 'sk_sandbox_handwritten_offset_0001', created_at: '2026-11-01T09:00:00+09:00', expires_at: '2027-01-31T20:00:00+09:00' },
      { key: 'sk_sandbox_handwritten_dateonly_01', created_at: '2026-11-01', expires_at: '2027-01-31' },
    ] }))
    const table = await runCli(['keys', 'list', '--keys', keysFile])
    const rows = table.stdout.split('\n')
    expect(rows[1]).toMatch(/\s2026-11-01T00:00:00Z\s+2027-01-31T11:00:00Z$/)
    expect(rows[2]).toMatch(/\s2026-11-01T00:00:00Z\s+2027-01-31T00:00:00Z$/)
  })

  it('says that a revocation applies to a server running with --keys, not to one in open mode', async () => {
    // "a running server refuses it" read as true of any server: one in open mode (no --keys)
    // reads no keys file and goes on accepting the revoked key.
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()
    const revoked = await runCli(['keys', 'revoke', key, '--keys', keysFile])
    expect(revoked.code).toBe(0)
    expect(revoked.stdout).toContain('revoked; a server running with --keys on this keys file refuses it with 401 SANDBOX_API_KEY_INVALID within a second; one in open mode, without --keys, does not read it and still accepts the key')
  })

  it('shows a label with control characters as escapes, not to the terminal, in create and list', async () => {
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const created = await runCli(['keys', 'create', '--keys', keysFile, '--label', '\u001b[31mred\u0007'])
    expect([created.code, created.stderr]).toEqual([0, `added to ${keysFile} as "\\u001b[31mred\\u0007"; use it with: sandbox serve --keys ${keysFile}\n`])
    const table = await runCli(['keys', 'list', '--keys', keysFile])
    expect(table.code).toBe(0)
    expect(table.stdout).toContain('\\u001b[31mred\\u0007')
    expect(table.stdout).not.toMatch(/[\u001b\u0007]/)
  })

  it('exits 2 with a message for an unknown key, a missing KEY without a TTY, a bad duration and an expiry without a zone', async () => {
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    await runCli(['keys', 'create', '--keys', keysFile])
    for (const args of [['keys', 'revoke', 'sk_sandbox_nobody_0000000000', '--keys', keysFile], ['keys', 'revoke', '--keys', keysFile], ['keys', 'create', '--keys', keysFile, '--expires-in', 'soon'], ['keys', 'create', '--keys', keysFile, '--expires-at', '2027-01-31T10:00']]) {
      const { code, stderr } = await runCli(args)
      expect(code, args.join(' ')).toBe(2)
      expect(stderr).toMatch(/^sandbox: /)
    }
    // Why nothing matched: an open-mode key has no record; a short prefix picks nothing.
    const open = await runCli(['keys', 'reset', 'sk_sandbox_my_first_key_123456', '--keys', keysFile, '--storage', 'memory'])
    expect(open).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: sk_sandbox_my_f…3456 is not a registered key .* an open-mode key has none \(for an empty state, use a new key\)\n$/) })
    const short = await runCli(['keys', 'revoke', 'sk_sandbox_', '--keys', keysFile])
    expect(short).toMatchObject({ code: 2, stderr: 'sandbox: "sk_sandbox_" is too short to pick a key: give the key, its masked form, or a prefix of at least 12 characters\n' })
    // A key that has already expired is allowed (to test a client's 401 handling), with a note.
    const expired = await runCli(['keys', 'create', '--keys', keysFile, '--expires-at', '2020-01-01T00:00:00Z'])
    expect(expired.code).toBe(0)
    expect(expired.stderr).toContain('note: this key has already expired; the server answers it 401 SANDBOX_API_KEY_INVALID')
    const later = await runCli(['keys', 'create', '--keys', keysFile, '--expires-in', '1h'])
    expect(later.stderr).not.toContain('note:')
  })

  // Node's recursive mkdir loops for good under /proc; keys create spun at full CPU.
  it.skipIf(!existsSync('/proc/self'))('refuses a keys file under a directory the system will not create, at once', async () => {
    const result = await runCli(['keys', 'create', '--keys', '/proc/sandbox-none/keys.json'])
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toMatch(/^sandbox: cannot write keys file \/proc\/sandbox-none\/keys\.json: ENOENT/)
  })
})

describe('sandbox logs', () => {
  it('serve and sandbox logs name the body fields a POST ignored (a misspelt field) after the request line, quoting a name that holds a comma', async () => {
    const dir = await tempDir()
    const key = 'sk_sandbox_e2e_ignored_0123456789'
    const serve = await startServe(['--port', '0', '--data-dir', dir])
    const answer = await fetch(`${serve.url}/api/sandbox/partner`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'ignored-1', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Acme', emial: 'dev@acme.example', 'a, b': 1 }) })
    expect([answer.status, answer.headers.get('x-sandbox-ignored-fields')]).toEqual([200, 'emial, a%2C%20b'])
    await vi.waitFor(() => expect(serve.output()).toMatch(/POST \/api\/sandbox\/partner 200 \d+ms req_[0-9a-f]{20} ignored: emial, "a, b"\n/), { timeout: 10_000 })
    expect(await serve.stop()).toBe(0)
    const logs = await runCli(['logs', '--data-dir', dir, '--key', key])
    expect(logs.code).toBe(0)
    expect(logs.stdout.trim()).toMatch(/ POST {3}\/api\/sandbox\/partner 200 - \d+ms req_\w+ idem=ignored-1 ignored=emial, "a, b"$/)
  })

  it('serve and sandbox logs mark a retry that got the stored answer as replayed, and leave the request that ran unmarked', async () => {
    const dir = await tempDir()
    const key = 'sk_sandbox_e2e_replayed_0123456789'
    const serve = await startServe(['--port', '0', '--data-dir', dir])
    const post = () => fetch(`${serve.url}/api/sandbox/loans/flow`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'retry-1' }, body: '{"action":"run_kyt"}' })
    const [first, retry] = [await post(), await post()]
    expect([first.status, retry.status, retry.headers.get('idempotent-replayed')]).toEqual([409, 409, 'true'])
    await vi.waitFor(() => expect(serve.output()).toMatch(/POST \/api\/sandbox\/loans\/flow 409 \d+ms req_[0-9a-f]{20} FLOW_CONFLICT replayed\n/), { timeout: 10_000 })
    expect(serve.output()).toMatch(/POST \/api\/sandbox\/loans\/flow 409 \d+ms req_[0-9a-f]{20} FLOW_CONFLICT\n/)
    expect(await serve.stop()).toBe(0)
    const logs = await runCli(['logs', '--data-dir', dir, '--key', key])
    expect(logs.stdout.trim().split('\n').map((line) => line.replace(/^.* idem=/, 'idem='))).toEqual(['idem=retry-1', 'idem=retry-1 replayed'])
    const json = await runCli(['logs', '--data-dir', dir, '--key', key, '--json'])
    expect(json.stdout.trim().split('\n').map((line) => JSON.parse(line).idempotency_replayed)).toEqual([undefined, true])
  })

  it('shows the request log of an fs server, per key, and follows new requests', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    const serve = await startServe(['--port', '0', '--quiet', '--data-dir', dir])
    const key = 'sk_sandbox_logs_test_0123456789'
    await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })
    await fetch(`${serve.url}/api/sandbox/loans/flow`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'log-idem-1' }, body: '{"action":"run_kyt"}',
    })
    await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: 'Bearer sk_sandbox_someone_else_01234' } })
    const keysFile = join(dir, 'keys.json')
    const registered = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()
    await fetch(`${serve.url}/api/sandbox/partner`, { headers: { authorization: `Bearer ${registered}` } })
    await waitForLoggedRequests(dir, 4)
    const all = await runCli(['logs', '--data-dir', dir, '--json'])
    expect(all.code).toBe(0)
    expect(all.stdout.trim().split('\n')).toHaveLength(4)
    const mine = await runCli(['logs', '--data-dir', dir, '--key', key])
    const lines = mine.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatch(/POST\s+\/api\/sandbox\/loans\/flow 409 FLOW_CONFLICT \d+ms req_[0-9a-f]+ idem=log-idem-1/)
    // --key takes the masked form the log shows, and a unique prefix of a key in the keys file.
    const masked = await runCli(['logs', '--data-dir', dir, '--keys', keysFile, '--key', 'sk_sandbox_logs…6789'])
    expect(masked.stdout).toBe(mine.stdout)
    const byPrefix = await runCli(['logs', '--data-dir', dir, '--keys', keysFile, '--key', registered.slice(0, 16)])
    expect(byPrefix.stdout).toMatch(/^\S+ sk_sandbox_\S+ GET\s+\/api\/sandbox\/partner 200 /)
    expect(byPrefix.stdout.trim().split('\n')).toHaveLength(1)
    // A prefix long enough to look like a whole key is still a prefix of the registered one.
    const byLongPrefix = await runCli(['logs', '--data-dir', dir, '--keys', keysFile, '--key', registered.slice(0, 30)])
    expect(byLongPrefix.stdout).toBe(byPrefix.stdout)
    const lastOne = await runCli(['logs', '--data-dir', dir, '--tail', '1', '--json'])
    expect(lastOne.stdout.trim().split('\n').map((line) => JSON.parse(line).path)).toEqual(['/api/sandbox/partner'])
    const badTail = await runCli(['logs', '--data-dir', dir, '--tail', 'ten'])
    expect(badTail).toMatchObject({ code: 2, stdout: '' })
    expect(badTail.stderr).toContain('a whole number of requests')
    // Nor a count below 0: what could the last -5 requests be?
    // --tail 0 reads nothing: no output at all, not an empty line.
    expect(await runCli(['logs', '--data-dir', dir, '--tail', '0'])).toMatchObject({ code: 0, stdout: '' })
    const negativeTail = await runCli(['logs', '--data-dir', dir, '--tail=-5'])
    expect(negativeTail).toMatchObject({ code: 2, stdout: '' })
    expect(negativeTail.stderr).toContain('"-5": expected a whole number of requests')
    const unknown = await runCli(['logs', '--data-dir', dir, '--keys', join(dir, 'none.json'), '--key', 'sk_sandbox_logs'])
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toContain('--key "sk_sandbox_logs" is not a key: give the whole key, or its masked form')

    const { spawn } = await import('node:child_process')
    const { BIN } = await import('../helpers/cli.js')
    const follower = spawn(process.execPath, [BIN, 'logs', '--follow', '--tail', '1', '--data-dir', dir, '--key', key], { env: { ...process.env, NO_COLOR: '1' } })
    let followed = ''
    follower.stdout.on('data', (chunk) => { followed += chunk })
    try {
      // The last of the two requests already logged (--tail 1), then the one made while it follows.
      await waitForLines(() => followed, 1)
      await fetch(`${serve.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })
      await waitForLines(() => followed, 2)
    } finally {
      // Not started through the helpers, so killAll() would not stop it.
      follower.kill('SIGINT')
    }
    // Ctrl+C is how --follow ends: a clean exit.
    const exit = await new Promise<[number | null, string | null]>((resolve) => follower.once('exit', (code, signal) => resolve([code, signal])))
    expect(exit).toEqual([0, null])
    const followedLines = followed.trim().split('\n')
    expect(followedLines).toHaveLength(2)
    expect(followedLines[0]).toContain('POST   /api/sandbox/loans/flow 409')
    expect(followedLines[1]).toContain('GET    /api/sandbox/loans 200')
    await serve.stop()
  })

  it('prints the control characters of a logged Idempotency-Key as escapes, not to the terminal', async () => {
    const dir = await tempDir()
    const serve = await startServe(['--port', '0', '--quiet', '--data-dir', dir])
    // Node's HTTP parser lets 0x80-0xff through in a header value: 0x9b is CSI, an escape sequence's start.
    const idem = Buffer.from('idem\x9b31mRED\tTAB', 'latin1')
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(serve.url).port), '127.0.0.1')
      socket.on('error', reject).on('close', () => resolve()).resume()
      socket.end(Buffer.concat([
        Buffer.from('POST /api/sandbox/loans/flow HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nauthorization: Bearer sk_sandbox_logs_escape_0123456789\r\nidempotency-key: '),
        idem, Buffer.from('\r\ncontent-length: 20\r\n\r\n{"action":"run_kyt"}'),
      ]))
    })
    await waitForLoggedRequests(dir, 1)
    const shown = await runCli(['logs', '--data-dir', dir])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('idem=idem\\u009b31mRED\\tTAB')
    expect(shown.stdout).not.toMatch(/[\u0080-\u009f\t]/)
  })

  it('prints a log of more buckets than it may open files at once', async () => {
    // A key paced by the rate limit makes about one request per 500 ms flush: one bucket each.
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    const log = createRequestLog(storage)
    const buckets = 600
    try {
      for (let i = 0; i < buckets; i++) {
        log.record('k1', { request_id: `req_${i}`, at: new Date().toISOString(), key: 'sk_sandbox_paced…0001', method: 'GET', path: '/api/sandbox/loans', status: 200, error_code: null, idempotency_key: null, duration_ms: 1 })
        await log.flush()
      }
    } finally {
      await log.close()
      await storage.dispose()
    }
    // 256 open files at most (soft and hard limit, so node cannot raise it), fewer than the buckets.
    const { code, stdout, stderr } = await runCli(['logs', '--data-dir', dir, '--json'], { shell: 'ulimit -n 256 &&' })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(buckets)
    expect(JSON.parse(lines.at(-1)!).request_id).toBe(`req_${buckets - 1}`)
  })

  it('takes a masked key typed with three dots for the … that logs and keys list show', async () => {
    // "…" is one character few keyboards have: typed as "...", a key the list showed was "not a key".
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    const log = createRequestLog(storage)
    try {
      for (const [index, key] of ['sk_sandbox_open…0001', 'sk_sandbox_open…0002'].entries()) {
        log.record(`k${index}`, { request_id: `req_${index}`, at: new Date().toISOString(), key, method: 'GET', path: '/api/sandbox/loans', status: 200, error_code: null, idempotency_key: null, duration_ms: 1 })
      }
    } finally {
      await log.close()
      await storage.dispose()
    }
    const { code, stdout, stderr } = await runCli(['logs', '--data-dir', dir, '--keys', join(dir, 'none.json'), '--json', '--key', 'sk_sandbox_open...0002'])
    expect([code, stderr]).toEqual([0, ''])
    expect(stdout.trim().split('\n').map((line) => JSON.parse(line).request_id)).toEqual(['req_1'])
  })

  it('refuses a masked key that two keys of the log share, rather than mix their requests as one key\'s', async () => {
    // sk_sandbox_partner_debug_0001 and sk_sandbox_partner_rate_00001 both show as sk_sandbox_part…0001.
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    const log = createRequestLog(storage)
    try {
      for (const [index, keyId] of ['k-debug', 'k-rate', 'k-debug'].entries()) {
        log.record(keyId, { request_id: `req_${index}`, at: new Date().toISOString(), key: 'sk_sandbox_part…0001', method: 'GET', path: '/api/sandbox/loans', status: 200, error_code: null, idempotency_key: null, duration_ms: 1 })
      }
    } finally {
      await log.close()
      await storage.dispose()
    }
    const mixed = await runCli(['logs', '--data-dir', dir, '--keys', join(dir, 'none.json'), '--json', '--key', 'sk_sandbox_part...0001'])
    expect([mixed.code, mixed.stderr]).toEqual([2, 'sandbox: sk_sandbox_part…0001 is the masked form of more than one key in this request log: give the whole key\n'])
  })

  it('explains that memory storage has no readable log', async () => {
    const { code, stderr } = await runCli(['logs', '--storage', 'memory'])
    expect(code).toBe(2)
    expect(stderr).toContain('memory storage')
  })

  it('refuses a data dir that does not exist, without creating it, and keys reset still resets the key', async () => {
    const dir = await tempDir()
    const missing = join(dir, 'typo')
    const { code, stdout, stderr } = await runCli(['logs', '--data-dir', missing])
    expect([code, stdout, stderr]).toEqual([2, '', `sandbox: no sandbox data dir at ${missing}: pass the --data-dir that sandbox serve uses (default .sandbox in the directory it was started in)\n`])
    expect(existsSync(missing)).toBe(false)
    const keysFile = join(dir, 'keys.json')
    const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim().split('\n')[0]!
    const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--data-dir', missing])
    expect([reset.code, reset.stderr]).toEqual([0, ''])
    expect(reset.stdout).toContain('now starts from an empty sandbox state')
    // Only a server that reads this keys file applies it: one in open mode reads none.
    expect(reset.stdout).toContain('(a server running with --keys on this keys file applies it within a second; one in open mode, without --keys, does not read it)')
    expect(existsSync(missing)).toBe(false)
  })
})
