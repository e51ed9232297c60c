import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import { killAll, runCli } from '../helpers/cli.js'
import { findFreePort } from '../helpers/free-port.js'
import { startReverseProxy } from '../helpers/reverse-proxy.js'

// `sandbox run --receiver-port/--receiver-url` with the built CLI; the tunnel is a reverse proxy
// on 127.0.0.1 that strips its path prefix, as `location /tun/ { proxy_pass ... }` does.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  killAll()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)

describe('sandbox run through a tunnel to its receiver', () => {
  it('registers the tunnel\'s URL, says at start where the receiver listens, and the webhook scenarios pass through it', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, allowLocalWebhooks: true, logError: () => {} })
    const listener = await listenSandbox(sandbox, { port: 0, host: '127.0.0.1' })
    cleanups.push(async () => { await listener.close(); await sandbox.close() })
    const port = await findFreePort()
    const tunnel = await startReverseProxy(`http://127.0.0.1:${port}`, { stripPrefix: '/tun' })
    cleanups.push(() => tunnel.close())
    const { code, stdout, stderr } = await runCli(['run', 'webhook-test-event', 'webhook-loan-events', '--base-url', listener.url, '--receiver-port', String(port)], { env: { SANDBOX_RECEIVER_URL: `${tunnel.url}/tun/` } })
    expect([code, stderr, lastLine(stdout)]).toEqual([0, '', '2 passed, 0 failed'])
    expect(stdout.split('\n')[0]).toBe(`webhook receiver listening on http://127.0.0.1:${port}, expecting deliveries through ${tunnel.url}/tun/hooks/<run> (forward ${tunnel.url}/tun/* to http://127.0.0.1:${port})`)
    expect(tunnel.requests.filter((request) => request.method === 'POST').length).toBeGreaterThanOrEqual(8)
  })

  it('--receiver-port 0 takes any free port and says which; with --json the line goes to stderr', async () => {
    const { code, stdout, stderr } = await runCli(['run', 'webhook-test-event', '--receiver-port', '0', '--json'])
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toMatchObject({ passed: 1, failed: 0 })
    expect(stderr).toMatch(/^sandbox: webhook receiver listening on http:\/\/127\.0\.0\.1:[1-9]\d*\n$/)
  })

  it('a busy --receiver-port is exit 2 before any scenario, naming the flag', async () => {
    const blocker = await startReverseProxy('http://127.0.0.1:9')
    cleanups.push(() => blocker.close())
    const port = new URL(blocker.url).port
    const text = await runCli(['run', 'webhook-test-event', '--receiver-port', port])
    expect([text.code, text.stdout, text.stderr]).toEqual([2, '', `sandbox: port ${port} on 127.0.0.1 is already in use; pick another with --receiver-port (0 = any free port)\n`])
    const json = await runCli(['run', 'webhook-test-event', '--json'], { env: { SANDBOX_RECEIVER_PORT: port } })
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'EADDRINUSE', message: `port ${port} on 127.0.0.1 is already in use; pick another with --receiver-port (0 = any free port)` } })
  })

  it('refuses a receiver URL it cannot use, before anything starts (exit 2)', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--receiver-url', 'abc.ngrok.app'], {}, '--receiver-url must be an absolute http(s) URL (the tunnel\'s public address, e.g. https://abc.ngrok.app), got "abc.ngrok.app"'],
      [['--receiver-url', 'ftp://127.0.0.1/x'], {}, '--receiver-url must be an http(s) URL, got ftp: in "ftp://127.0.0.1/x"'],
      [['--receiver-url', 'https://user:secret@127.0.0.1/x'], {}, '--receiver-url must not carry a user name or password (the server refuses such an endpoint), got "https://***@127.0.0.1/x"'],
      [['--receiver-url', 'https://127.0.0.1/x?token=1'], {}, '--receiver-url must not have a query or fragment (the runner appends /hooks/<run> to its path), got "https://127.0.0.1/x?token=1"'],
      [[], { SANDBOX_RECEIVER_URL: 'https://127.0.0.1/x#top' }, 'SANDBOX_RECEIVER_URL must not have a query or fragment (the runner appends /hooks/<run> to its path), got "https://127.0.0.1/x#top"'],
    ]
    for (const [flags, env, message] of cases) {
      const { code, stdout, stderr } = await runCli(['run', 'webhook-test-event', ...flags], { env })
      expect([flags, env, code, stdout, stderr]).toEqual([flags, env, 2, '', `sandbox: ${message}\n`])
    }
  })

  it('refuses a receiver port that is no port number, from the flag or the environment (exit 2)', async () => {
    const flag = await runCli(['run', 'webhook-test-event', '--receiver-port', '70000'])
    expect([flag.code, flag.stdout, flag.stderr]).toEqual([2, '', 'sandbox: invalid --receiver-port "70000": expected a port from 0 to 65535 (0 = any free port)\n'])
    const env = await runCli(['run', 'webhook-test-event'], { env: { SANDBOX_RECEIVER_PORT: 'abc' } })
    expect([env.code, env.stdout, env.stderr]).toEqual([2, '', 'sandbox: invalid SANDBOX_RECEIVER_PORT "abc": expected a port from 0 to 65535 (0 = any free port)\n'])
  })
})
