import { randomUUID } from 'node:crypto'
import { Agent, request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, startNodeProcess, startServe } from '../helpers/cli.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-restart-backlog')
let receiver: TestReceiver | undefined
afterEach(async () => {
  killAll()
  await receiver?.close()
  receiver = undefined
})

// More keys waiting than the descriptors macOS gives a process in a terminal (256).
const KEYS = 600
const EVENTS_PER_KEY = 2
const FD_LIMIT = 256

function post(agent: Agent, url: string, key: string): Promise<{ status: number; body: string }> {
  const text = JSON.stringify({ collateral_btc: 0.005, loan_amount: 100 })
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/sandbox/loans`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'idempotency-key': randomUUID() },
    }, (res) => {
      let body = ''
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.on('error', reject)
    req.end(text)
  })
}

describe('a restart with more keys waiting for deliveries than the process has descriptors', () => {
  it('starts, answers the API, and delivers every waiting event once, each key\'s in order', async () => {
    const dir = await tempDir()
    const dead = `http://127.0.0.1:${await findClosedPort()}/forward`
    // The first retry is due before the restart; the refused ones after it die with the process.
    const schedule = ['--webhook-retry-schedule', '300ms,1h']
    const first = await startServe(['--port', '0', '--quiet', '--data-dir', dir, '--rate-limit', 'off', '--webhook-forward-to', dead, ...schedule])
    const agent = new Agent({ keepAlive: true, maxSockets: 8 })
    const issued = new Map<string, [string, string]>()
    const keys = Array.from({ length: KEYS }, (_, i) => `sk_sandbox_backlog_${i}_${randomUUID().replaceAll('-', '')}`)
    let next = 0
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!
        for (let i = 0; i < EVENTS_PER_KEY; i++) {
          const answer = await post(agent, first.url, key)
          expect(answer.status).toBe(200)
          issued.set(JSON.parse(answer.body).activeLoans.at(-1).id, [key, String(i)])
        }
      }
    }))
    agent.destroy()
    await first.stop('SIGKILL')

    receiver = await startReceiver('/forward')
    // Every waiting key's document read at once took a descriptor each: past the limit the reads
    // failed with EMFILE and serve could not even listen (exit 2).
    const second = await startNodeProcess(
      ['-c', `ulimit -n ${FD_LIMIT} && exec "$0" "$@"`, process.execPath, BIN, 'serve', '--port', '0', '--quiet', '--data-dir', dir, '--rate-limit', 'off', '--webhook-forward-to', receiver.url, ...schedule],
      /sandbox ready: (\S+)/,
      { command: 'sh' },
    )
    const answer = await fetch(`${second.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${keys[0]}` } })
    expect(answer.status).toBe(200)
    expect((await answer.json()).activeLoans).toHaveLength(EVENTS_PER_KEY)

    const received = await receiver.waitFor(KEYS * EVENTS_PER_KEY, 30_000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(received).toHaveLength(KEYS * EVENTS_PER_KEY)
    const byKey = new Map<string, string[]>()
    for (const { body } of received) {
      const [key, place] = issued.get(JSON.parse(body).data.object.id)!
      byKey.set(key, [...(byKey.get(key) ?? []), place])
    }
    expect(byKey.size).toBe(KEYS)
    for (const places of byKey.values()) expect(places).toEqual(['0', '1'])
    expect(second.output()).not.toContain('EMFILE')
    expect(await second.stop()).toBe(0)
  }, 90_000)
})
