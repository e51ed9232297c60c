import { afterAll, describe, expect, it } from 'vitest'
import { buildRequest, LOAN } from '../helpers/api.js'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil } from '../helpers/cli.js'
import { findClosedPort, startReceiver } from '../helpers/receiver.js'

afterAll(() => killAll())

const KEY = 'sk_sandbox_url_credentials_0001'
const TOKEN = 'tok_ci_0123456789abcdef'
const SECRET = 'whsec_url_credentials_0123456789'

/** RECEIVER_URL with TOKEN as its user part, as a receiver behind basic auth takes it. */
function withToken(receiverUrl: string): string {
  return receiverUrl.replace('http://', `http://${TOKEN}@`)
}

/** The URLs of the key's delivery log, as GET /api/sandbox/webhooks shows them. */
async function readLoggedUrls(serveUrl: string): Promise<string[]> {
  const answer = await fetch(buildRequest(serveUrl, 'GET', '/api/sandbox/webhooks', {}, KEY))
  return ((await answer.json()) as { deliveries: Array<{ url: string }> }).deliveries.map((delivery) => delivery.url)
}

describe('a --webhook-forward-to URL with a token as its user part', () => {
  it('shows as *** in serve\'s start and delivery lines, human and --json-logs, and in the delivery log', async () => {
    const receiver = await startReceiver('/hook')
    receiver.respond = () => 500
    const masked = receiver.url.replace('http://', 'http://***@')
    try {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', withToken(receiver.url)])
      expect((await fetch(buildRequest(serve.url, 'POST', '/api/sandbox/loans', { body: LOAN }, KEY))).status).toBe(200)
      await receiver.waitFor(1)
      await waitUntil(() => / webhook \S+ -> /.test(serve.output()))
      expect(serve.output()).toContain(`every event is also forwarded to ${masked}, signed with`)
      expect(serve.output()).toMatch(new RegExp(` webhook \\S+ -> ${masked.replaceAll('*', '\\*')} 500 retrying`))
      expect(new Set(await readLoggedUrls(serve.url))).toEqual(new Set([masked]))
      expect(await serve.stop()).toBe(0)
      expect(serve.output()).not.toContain(TOKEN)

      const json = await startServe(['--port', '0', '--storage', 'memory', '--json-logs', '--webhook-forward-to', withToken(receiver.url)])
      expect((await fetch(buildRequest(json.url, 'POST', '/api/sandbox/loans', { body: LOAN }, KEY))).status).toBe(200)
      await receiver.waitFor(2)
      await waitUntil(() => json.output().includes('"event":"webhook"'))
      const lines = json.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.find((line) => line.event === 'ready')).toMatchObject({ webhook_forward_to: masked })
      expect(lines.find((line) => line.event === 'webhook')).toMatchObject({ url: masked })
      expect(await json.stop()).toBe(0)
      expect(json.output()).not.toContain(TOKEN)
    } finally {
      await receiver.close()
    }
  })
})

describe('sandbox webhook verify given a receiver URL with credentials', () => {
  it('prints the URL with its token or password as ***, in its lines, its --json report and its error', async () => {
    const receiver = await startReceiver('/hook', 0, { checkDeliveries: false })
    try {
      const human = await runCli(['webhook', 'verify', withToken(receiver.url), '--secret', SECRET])
      expect(human.stdout).toContain(`sending the verify battery to ${receiver.url.replace('http://', 'http://***@')}`)
      const json = await runCli(['webhook', 'verify', receiver.url.replace('http://', 'http://ci:s3cret-pw@'), '--secret', SECRET, '--json'])
      expect((JSON.parse(json.stdout) as { url: string }).url).toBe(receiver.url.replace('http://', 'http://ci:***@'))
      const dead = await runCli(['webhook', 'verify', `http://${TOKEN}@127.0.0.1:${await findClosedPort()}/hook`, '--secret', SECRET])
      expect(dead.stderr).toMatch(/cannot reach the receiver at http:\/\/\*\*\*@127\.0\.0\.1:\d+\/hook/)
      for (const run of [human, json, dead]) expect(`${run.stdout}${run.stderr}`).not.toMatch(/tok_ci_|s3cret-pw/)
    } finally {
      await receiver.close()
    }
  })
})

describe('serve refusing a --webhook-forward-to URL with a token', () => {
  it('does not print the token in its error', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--storage', 'memory', '--webhook-forward-to', `http://${TOKEN}@127.0.0.1:0/hook`])
    expect(code).toBe(2)
    expect(stderr).toContain('(got "http://***@127.0.0.1:0/hook")')
    expect(stderr).not.toContain(TOKEN)
  })
})

describe('sandbox webhook listen --forward-to a URL with a token', () => {
  it('prints it as *** in its ready line and the line of each delivery it passes on, text and --json', async () => {
    const receiver = await startReceiver('/hook', 0, { checkDeliveries: false })
    const masked = receiver.url.replace('http://', 'http://***@')
    try {
      for (const json of [false, true]) {
        const ready = json ? /"event":"ready","url":"([^"]+)"/ : /webhook listener ready: (\S+)/
        const listener = await startNodeProcess([BIN, 'webhook', 'listen', '--port', '0', '--forward-to', withToken(receiver.url), ...(json ? ['--json'] : [])], ready)
        const sent = await fetch(listener.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-webhook-event': 'sandbox.loan.issued' }, body: '{}' })
        expect(sent.status).toBe(200)
        await waitUntil(() => listener.output().split('\n').filter(Boolean).length >= 2)
        expect(listener.output()).toContain(json ? `"forward_to":"${masked}"` : `forwarding to ${masked}`)
        if (!json) expect(listener.output()).toContain(`→ ${masked} 200`)
        expect(await listener.stop()).toBe(0)
        expect(listener.output()).not.toContain(TOKEN)
      }
    } finally {
      await receiver.close()
    }
  })
})
