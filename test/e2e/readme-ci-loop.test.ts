import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { BIN, MANY_RUNS_TIMEOUT_MS } from '../helpers/cli.js'
import { findFreePort } from '../helpers/free-port.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

// The README's CI loop ("Webhooks without a tunnel") run as a CI job copies it: serve in the
// background with the exported secret, then one trigger per event type, each waiting for its
// deliveries. Only what a reader adapts changes: the ports, and npx for the built CLI.
const README = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')
const FIRST_LINE = 'export SANDBOX_WEBHOOK_FORWARD_SECRET='

let receiver: TestReceiver | undefined
let script: ReturnType<typeof spawn> | undefined
afterEach(async () => {
  // The whole group: the block's serve runs in the background of the script's shell.
  if (script?.pid && script.exitCode === null) process.kill(-script.pid, 'SIGKILL')
  await receiver?.close()
})

describe('the README CI loop', () => {
  it('runs as written: every trigger exits 0, and the receiver gets each event type signed with the exported secret', async () => {
    const start = README.indexOf(`\`\`\`sh\n${FIRST_LINE}`)
    expect(start).toBeGreaterThan(-1)
    const body = README.slice(start + 6)
    const block = body.slice(0, body.indexOf('\n```'))
    const secret = /^export SANDBOX_WEBHOOK_FORWARD_SECRET=(\S+)/.exec(block)![1]!
    const events = /^for event in (.+); do$/m.exec(block)![1]!.split(' ')

    receiver = await startReceiver('/webhooks')
    const port = await findFreePort()
    // The block's receiver, the package's reference one on :3000: the test's receiver stands in for it.
    const receiverLine = /^WEBHOOK_SECRET=\$SANDBOX_WEBHOOK_FORWARD_SECRET node node_modules\/partner-sandbox\/fixtures\/receivers\/receiver\.mjs 3000 &/m
    expect(block).toMatch(receiverLine)
    const lines = block.split('\n').flatMap((line) => {
      if (receiverLine.test(line)) return []
      const adapted = line.replaceAll('npx sandbox', `"${process.execPath}" "${BIN}"`)
        .replaceAll('http://127.0.0.1:3000/webhooks', receiver!.url).replaceAll('127.0.0.1:4010', `127.0.0.1:${port}`)
      // Harness only: the job's end stops the server in CI; here the script does.
      return /sandbox(\.js")? serve .*&$/.test(adapted) ? [adapted, 'SERVE=$!; trap \'kill $SERVE; wait $SERVE\' EXIT'] : [adapted]
    })
    expect(lines.filter((line) => line.includes('trap '))).toHaveLength(1)
    // The block's triggers use their default base URL, 127.0.0.1:4010: with another port, so does the reader's env.
    const env = { ...process.env, NO_COLOR: '1', SANDBOX_PORT: String(port), SANDBOX_BASE_URL: `http://127.0.0.1:${port}` }
    script = spawn('bash', ['-c', lines.join('\n')], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    script.stdout!.on('data', (chunk) => { output += chunk })
    script.stderr!.on('data', (chunk) => { output += chunk })
    const code = await new Promise((resolve) => script!.on('close', resolve))
    expect([code, output]).toEqual([0, expect.any(String)])

    const types = new Set(receiver.received.map((delivery) => JSON.parse(delivery.body).type))
    expect(events.map((event) => types.has(`sandbox.${event}`))).toEqual(events.map(() => true))
    for (const delivery of receiver.received) {
      expect(() => verifyWebhook({ secret, body: delivery.body, headers: delivery.headers })).not.toThrow()
    }
  }, MANY_RUNS_TIMEOUT_MS)
})
