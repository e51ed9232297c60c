import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe, waitUntil } from '../helpers/cli.js'
import { findClosedPort } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// The contract of every command that prints one JSON document with --json: whatever happens,
// stdout holds exactly one document (the report, or {"error": {"code", "message"}}), stderr the
// text for a person, and the exit code is the documented one.

const tempDir = useTempDirs('sandbox-json-output')
const FAULT = join(import.meta.dirname, '../helpers/inject-fault.mjs')
const SIGNAL_ON_LOAD = join(import.meta.dirname, '../helpers/signal-on-load.mjs')
const EVENT = JSON.stringify({ id: 'evt_json_1', type: 'sandbox.webhook.test', data: { object: {} } })
let hanging: Server | undefined
const sockets = new Set<Socket>()

afterEach(async () => {
  killAll()
  for (const socket of sockets) socket.destroy()
  sockets.clear()
  await new Promise((resolve) => (hanging ? hanging.close(resolve) : resolve(undefined)))
  hanging = undefined
})

/** A loopback server that takes connections and never answers: a run against it is mid-way for seconds. */
async function startHangingServer(): Promise<string> {
  hanging = createServer((socket) => sockets.add(socket))
  await new Promise<void>((resolve) => hanging!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
}

/** Parses stdout as exactly one JSON document, and checks stderr carries the same message. */
function parseErrorDocument({ stdout, stderr }: { stdout: string; stderr: string }): { code: string; message: string } {
  const document = JSON.parse(stdout) as { error: { code: string; message: string } }
  expect(Object.keys(document)).toEqual(['error'])
  expect(stderr).toContain(document.error.message)
  return document.error
}

describe('--json error documents', () => {
  it('every one-document command prints {"error": {code, message}} for usage and setup errors, exit 2', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'broken-keys.json'), '{ "keys": [')
    const closed = `http://127.0.0.1:${await findClosedPort()}/webhooks`
    const cases: Array<[string[], string, string | RegExp, string?]> = [
      [['webhook', 'verify', closed, '--json'], 'USAGE', /^missing --secret/],
      [['webhook', 'verify', closed, '--json', '--secret', 'whsec_x'], 'UNREACHABLE', /^cannot reach the receiver at .*; is it running\?$/],
      [['webhook', 'verify', closed, '--json', '--timeout', 'abc'], 'USAGE', /^--timeout: invalid duration "abc": expected a number and ms, s, m, h, d or w/],
      [['webhook', 'verify', closed, '--timeout', 'abc', '--json'], 'USAGE', /^--timeout: invalid duration "abc"/],
      [['webhook', 'sign', '--json'], 'USAGE', 'missing --secret (or set SANDBOX_WEBHOOK_SECRET)', EVENT],
      [['webhook', 'sign', '--json', '--secret', 's'], 'USAGE', "the body on standard input is not valid JSON (line 1, column 2): Unexpected token 'o'; sign the exact event body you will send", 'not json'],
      [['webhook', 'sign', '--json', '--bogus'], 'USAGE', "unknown option '--bogus'", EVENT],
      [['keys', 'create', '--json', '--keys', join(dir, 'keys.json'), '--expires-in', '5x'], 'USAGE', /^--expires-in: invalid duration "5x"/],
      [['keys', 'list', '--json', '--keys', join(dir, 'broken-keys.json')], 'KEYS', /^keys file .*: not valid JSON \(line 1, column 12\)/],
      [['run', '--json', '--wait', 'soon'], 'USAGE', /^--wait: invalid duration "soon"/],
      [['webhook', 'trigger', 'loan.exploded', '--json'], 'USAGE', /^unknown event "loan\.exploded": one of /],
      [['webhook', 'trigger', 'loan.issued', '--json', '--base-url', closed.replace('/webhooks', '')], 'UNREACHABLE', /^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/webhooks \(ECONNREFUSED\) after 4 attempts; is the server running\?/],
      [['webhook', 'retry', '--json', '--wait', 'later'], 'USAGE', /^--wait: invalid duration "later"/],
      [['webhook', 'deliveries', '--json', '--base-url', 'ftp://127.0.0.1'], 'USAGE', '--base-url must be an http(s) URL, got "ftp://127.0.0.1"'],
      // Commander's own refusals, in the CLI's words as on stderr: the long flag, the value as JSON, the suggestion inline.
      [['webhook', 'deliveries', '--json', '--status', 'lost'], 'USAGE', '--status: invalid value "lost": expected one of pending, delivered, retrying, failed'],
      [['webhook', 'sign', '--json', '--secrett', 's'], 'USAGE', "unknown option '--secrett' (did you mean --secret?)", EVENT],
    ]
    for (const [args, code, message, input] of cases) {
      // FORCE_COLOR asks for colour: a JSON stdout never gets any.
      const result = await runCli(args, { input, env: { FORCE_COLOR: '3' } })
      expect(result.code, args.join(' ')).toBe(2)
      const error = parseErrorDocument(result)
      expect(error.code, args.join(' ')).toBe(code)
      expect(error.message, args.join(' ')).toMatch(typeof message === 'string' ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message)
      expect(result.stdout, args.join(' ')).not.toContain('\u001b')
    }
    // Without --json the error is text on stderr only.
    expect(await runCli(['webhook', 'verify', closed])).toMatchObject({ code: 2, stdout: '' })
  })

  it('an unexpected error (a bug) prints INTERNAL_ERROR with its message, the stack on stderr, exit 1', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    const hang = await startHangingServer()
    const cases: Array<[string, string[], string?]> = [
      ['fs/promises:readdir', ['run', '--json']],
      ['crypto:randomBytes', ['keys', 'create', '--json', '--keys', join(dir, 'keys.json')]],
      ['crypto:createHmac', ['webhook', 'sign', '--json', '--secret', 's'], EVENT],
      ['crypto:createHmac', ['webhook', 'verify', `${hang}/webhooks`, '--json', '--secret', 's']],
      // Thrown outside the action's promise chain, mid-run (the server never answers).
      ['uncaught:300', ['run', '--json', '--base-url', hang, 'loan-flow']],
      ['rejection:300', ['run', '--json', '--base-url', hang, 'loan-flow']],
    ]
    for (const [fault, args, input] of cases) {
      const result = await runCli(args, { input, env: { INJECT_FAULT: fault }, nodeArgs: ['--import', FAULT] })
      expect(result.code, fault).toBe(1)
      expect(parseErrorDocument(result), fault).toEqual({ code: 'INTERNAL_ERROR', message: `injected fault (${fault})` })
      expect(result.stderr, fault).toMatch(/^sandbox: unexpected error\nTypeError: injected fault .*\n {4}at /)
    }
    // Without --json: the stack, and nothing on stdout.
    const text = await runCli(['keys', 'create', '--keys', join(dir, 'keys.json')], { env: { INJECT_FAULT: 'crypto:randomBytes' }, nodeArgs: ['--import', FAULT] })
    expect(text).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^sandbox: unexpected error\nTypeError/) })
  })

  it.each(['SIGINT', 'SIGTERM'] as const)('%s mid-run prints INTERRUPTED and ends the process by that signal', async (signal) => {
    const hang = await startHangingServer()
    for (const args of [['run', '--json', '--base-url', hang, 'loan-flow'], ['webhook', 'verify', `${hang}/webhooks`, '--json', '--secret', 's']]) {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk) => { stdout += chunk })
      child.stderr.on('data', (chunk) => { stderr += chunk })
      const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, by) => resolve(by)))
      // Mid-run: the first request is out and waiting for an answer that never comes.
      await waitUntil(() => sockets.size > 0, 10_000, 'the first request')
      child.kill(signal)
      expect(await ended, args[0]).toBe(signal)
      expect(parseErrorDocument({ stdout, stderr }), args[0]).toEqual({ code: 'INTERRUPTED', message: `stopped by ${signal} before the report was complete` })
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    }
  })
})

describe('a signal while the CLI still loads', () => {
  // The signal is sent as the command's own module starts loading: before it, only the shim ran.
  it.each([
    ['SIGTERM', ['run', '--json', 'loan-flow'], 'dist/cli/commands/run.js'],
    ['SIGINT', ['webhook', 'verify', 'http://127.0.0.1:9/webhooks', '--json', '--secret', 's'], 'dist/cli/commands/webhook/verify.js'],
  ] as const)('%s still gets the INTERRUPTED document with --json (%s)', async (signal, args, module) => {
    const closed = `http://127.0.0.1:${await findClosedPort()}`
    const argv = args[0] === 'run' ? [...args, '--base-url', closed] : args
    const child = spawn(process.execPath, ['--import', SIGNAL_ON_LOAD, BIN, ...argv], { env: { ...process.env, NO_COLOR: '1', SIGNAL_ON_LOAD: signal, SIGNAL_ON_LOAD_MODULE: module } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const ended = await new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, by) => resolve(by)))
    expect(ended).toBe(signal)
    expect(parseErrorDocument({ stdout, stderr })).toEqual({ code: 'INTERRUPTED', message: `stopped by ${signal} before the report was complete` })
  })

  it('without --json ends by the signal at once, as before', async () => {
    const child = spawn(process.execPath, ['--import', SIGNAL_ON_LOAD, BIN, 'run', 'loan-flow', '--base-url', `http://127.0.0.1:${await findClosedPort()}`], { env: { ...process.env, NO_COLOR: '1', SIGNAL_ON_LOAD: 'SIGTERM', SIGNAL_ON_LOAD_MODULE: 'dist/cli/commands/run.js' } })
    let stdout = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    expect(await new Promise((resolve) => child.on('close', (_code, by) => resolve(by)))).toBe('SIGTERM')
    expect(stdout).toBe('')
  })
})

describe('JSON-lines commands', () => {
  it('print no error line when they cannot start: stdout empty, stderr says why, exit 2', async () => {
    const dir = await tempDir()
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    const busy = new URL(server.url).port
    const closed = `http://127.0.0.1:${await findClosedPort()}`
    const cases: Array<[string[], RegExp]> = [
      [['logs', '--json', '--data-dir', join(dir, 'none')], /^sandbox: no sandbox data dir at /],
      [['webhook', 'listen', '--json', '--port', busy], /^sandbox: port \d+ on 127\.0\.0\.1 is already in use/],
      [['serve', '--json-logs', '--storage', 'memory', '--port', busy], /^sandbox: port \d+ on 127\.0\.0\.1 is already in use/],
      // A script reading its lines takes each one for a delivery: an error object would be read as one.
      [['webhook', 'deliveries', '--follow', '--json', '--base-url', closed], /\nsandbox: cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/webhooks \(ECONNREFUSED\) after 4 attempts/],
      [['webhook', 'deliveries', '--json', '--follow', '--status', 'lost', '--base-url', closed], /^sandbox: --status: invalid value "lost": expected one of/],
    ]
    for (const [args, stderr] of cases) {
      expect(await runCli(args), args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(stderr) })
    }
    await server.stop()
  })
})

describe('JSON output and control characters', () => {
  it('writes C1 controls from a client as \\u escapes in logs --json and serve --json-logs', async () => {
    const dir = await tempDir()
    const server = await startServe(['--port', '0', '--data-dir', dir, '--json-logs'])
    // Byte 0x9b in a header, as a client may send it (HTTP allows 0x80-0xff): read as U+009B, CSI.
    const { port } = new URL(server.url)
    const head = 'POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_sandbox_c1_escape_000000000\r\nIdempotency-Key: ab'
    const tail = '31mcd\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('data', () => {}).on('error', () => {})
    socket.end(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from([0x9b]), Buffer.from(tail, 'latin1')]))
    await waitUntil(() => server.output().includes('"event":"request"'), 5000, 'the request line')
    // The log reaches storage with the request's commit, a moment after the answer.
    let logs = ''
    for (const deadline = Date.now() + 5000; !logs.includes('idempotency_key') && Date.now() < deadline;) {
      logs = (await runCli(['logs', '--json', '--data-dir', dir])).stdout
    }
    for (const [what, text] of [['serve --json-logs', server.output()], ['logs --json', logs]] as const) {
      expect(text, what).not.toMatch(/[\u007f-\u009f]/)
      const line = text.split('\n').find((entry) => entry.includes('"idempotency_key"'))!
      expect(line, what).toContain('"idempotency_key":"ab\\u009b31mcd"')
      expect(JSON.parse(line).idempotency_key, what).toBe('ab\u009b31mcd')
    }
    await server.stop()
  })
})
