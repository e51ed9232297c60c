import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { startReceiver } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-forward-secret')
const SECRET = 'whsec_ci_receiver_secret_0123456789'
afterAll(() => killAll())

describe('serve --webhook-forward-secret', () => {
  it('signs the forward deliveries with the secret a CI receiver already holds, and leaves the stored one as it is', async () => {
    const receiver = await startReceiver('/hooks')
    const dataDir = await tempDir()
    try {
      // A first start without it keeps a generated secret in the data dir.
      const first = await startServe(['--port', '0', '--data-dir', dataDir, '--webhook-forward-to', receiver.url])
      const stored = /signed with (whsec_\S+)/.exec(first.output())![1]!
      expect(await first.stop()).toBe(0)
      const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--webhook-forward-to', receiver.url, '--json-logs'], { env: { SANDBOX_WEBHOOK_FORWARD_SECRET: SECRET } })
      // The job holds the secret it gave: its log shows where it came from and a preview, never the secret.
      expect(JSON.parse(serve.output().trim().split('\n').at(-1)!)).toMatchObject({ event: 'ready', webhook_forward_secret: null, webhook_forward_secret_preview: `whsec_...${SECRET.slice(-4)}` })
      expect(serve.output()).not.toContain(SECRET)
      expect((await runCli(['webhook', 'trigger', 'loan.issued', '--base-url', serve.url, '--wait'])).code).toBe(0)
      const [delivery] = await receiver.waitFor(1)
      expect(() => verifyWebhook({ secret: SECRET, body: delivery!.body, headers: delivery!.headers })).not.toThrow()
      expect(() => verifyWebhook({ secret: stored, body: delivery!.body, headers: delivery!.headers })).toThrow()
      expect(await serve.stop()).toBe(0)
      const given = await startServe(['--port', '0', '--data-dir', dataDir, '--webhook-forward-to', receiver.url, '--webhook-forward-secret', SECRET])
      expect(given.output()).toContain(`signed with the secret from --webhook-forward-secret (whsec_...${SECRET.slice(-4)})\n`)
      expect(given.output()).not.toContain(SECRET)
      expect(await given.stop()).toBe(0)
      // Without it again: the stored secret, unchanged.
      const again = await startServe(['--port', '0', '--data-dir', dataDir, '--webhook-forward-to', receiver.url])
      expect(again.output()).toContain(`signed with ${stored}\n`)
      expect(await again.stop()).toBe(0)
    } finally {
      await receiver.close()
    }
  })

  it('refuses a short or unprefixed secret, naming where it came from, and one without --webhook-forward-to (exit 2)', async () => {
    const dataDir = join(await tempDir(), 'data')
    const base = ['serve', '--port', '0', '--data-dir', dataDir]
    const forward = ['--webhook-forward-to', 'http://127.0.0.1:9/h']
    expect(await runCli([...base, ...forward, '--webhook-forward-secret', 'whsec_short'])).toMatchObject({ code: 2, stderr: 'sandbox: --webhook-forward-secret must be whsec_ and at least 16 printable characters without spaces (sandbox webhook sign and the receivers use it whole), got whsec_ and 5 characters\n' })
    expect(await runCli([...base, ...forward], { env: { SANDBOX_WEBHOOK_FORWARD_SECRET: 'sk_live_0123456789abcdef' } })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: SANDBOX_WEBHOOK_FORWARD_SECRET must be whsec_ .*, got "sk_liv\.\.\."\n$/) })
    // A CI secret saved with echo keeps its final newline: told, not counted as "whsec_ and 36 characters".
    expect(await runCli([...base, ...forward], { env: { SANDBOX_WEBHOOK_FORWARD_SECRET: `${SECRET}\n` } })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: SANDBOX_WEBHOOK_FORWARD_SECRET must be whsec_ .*, got whsec_ and 29 characters with a line break or space around them \(a secret saved with its final newline\?\): remove it, from the receiver's copy too\n$/) })
    expect(await runCli([...base, '--webhook-forward-secret', SECRET])).toMatchObject({ code: 2, stderr: 'sandbox: --webhook-forward-secret signs the deliveries of --webhook-forward-to: give that URL too\n' })
    // Exported for the job's receiver (the README's CI loop), it reaches a serve that forwards nothing: named as what was set.
    expect(await runCli(base, { env: { SANDBOX_WEBHOOK_FORWARD_SECRET: SECRET } })).toMatchObject({ code: 2, stderr: 'sandbox: SANDBOX_WEBHOOK_FORWARD_SECRET signs the deliveries of --webhook-forward-to: give that URL too, or unset it for a serve that forwards nothing\n' })
  })
})
