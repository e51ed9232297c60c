import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { killAll, runCli, startServe, type ServeProcess } from '../helpers/cli.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let receiver: TestReceiver
let local: ServeProcess
let strict: ServeProcess
beforeAll(async () => {
  receiver = await startReceiver('/hooks')
  local = await startServe(['--port', '0', '--storage', 'memory', '--allow-local-webhooks'])
  strict = await startServe(['--port', '0', '--storage', 'memory'])
})
afterAll(async () => {
  await local?.stop()
  await strict?.stop()
  await receiver?.close()
  killAll()
})

const webhook = (server: ServeProcess, key: string, args: string[]) => runCli(['webhook', ...args, '--base-url', server.url, '--api-key', key])

describe('sandbox webhook register | disable', () => {
  it('registers the endpoint and prints its secret once; an update keeps the subscription; a rotation prints the new one', async () => {
    const key = 'sk_sandbox_endpoint_e2e_aaaaaaaaaa'
    const created = await webhook(local, key, ['register', receiver.url, '--events', 'loan.issued,webhook.test'])
    expect(created.code).toBe(0)
    const secret = /^signing secret: (whsec_\S+) \(shown this once: give it to your receiver\)$/m.exec(created.stdout)![1]!
    expect(created.stdout).toMatch(new RegExp(`^endpoint ${receiver.url} \\(enabled; sandbox\\.loan\\.issued, sandbox\\.webhook\\.test; secret whsec_\\.\\.\\.${secret.slice(-4)}\\)$`, 'm'))
    // The secret printed is the one the deliveries are signed with.
    expect((await webhook(local, key, ['trigger', 'webhook.test', '--wait'])).code).toBe(0)
    const [delivery] = await receiver.waitFor(1)
    expect(() => verifyWebhook({ secret, body: delivery!.body, headers: delivery!.headers })).not.toThrow()

    const updated = await webhook(local, key, ['register', receiver.url])
    expect(updated.stdout).toBe(`endpoint ${receiver.url} (enabled; sandbox.loan.issued, sandbox.webhook.test; secret whsec_...${secret.slice(-4)})\nsigning secret unchanged (--rotate-secret issues a new one)\n`)
    const rotated = JSON.parse((await webhook(local, key, ['register', receiver.url, '--rotate-secret', '--json'])).stdout)
    expect(rotated.endpoint).toMatchObject({ events: ['sandbox.loan.issued', 'sandbox.webhook.test'], signingSecret: expect.stringMatching(/^whsec_/) })
    expect(rotated.endpoint.signingSecret).not.toBe(secret)
    expect((await webhook(local, key, ['register', receiver.url, '--events', 'all'])).stdout).toContain('(enabled; every event;')

    expect(await webhook(local, key, ['disable'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^endpoint \S+ \(disabled; every event; /) })
    // Disabled: the test event has nowhere to go.
    expect((await webhook(local, key, ['trigger', 'webhook.test'])).code).toBe(2)
    expect((await webhook(local, key, ['register', receiver.url])).stdout).toContain('(enabled; every event;')
  })

  it('refusals say what to change (exit 2): a local URL on a server without --allow-local-webhooks, an unknown event, nothing to disable', async () => {
    const key = 'sk_sandbox_endpoint_e2e_bbbbbbbbbb'
    const local = await webhook(strict, key, ['register', receiver.url])
    expect(local).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: POST \/api\/sandbox\/webhooks answered 400 WEBHOOK_URL_INVALID: .*--allow-local-webhooks.* \(not_https\)\n$/) })
    expect(await webhook(strict, key, ['register', 'https://partner.example/hooks', '--events', 'loan.exploded'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: unknown event "loan\.exploded": one of /) })
    // Next to all, an unknown name is still one, and a known one is a contradiction, not every type.
    expect(await webhook(strict, key, ['register', 'https://partner.example/hooks', '--events', 'all,loan.exploded'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: unknown event "loan\.exploded": one of /) })
    expect(await webhook(strict, key, ['register', 'https://partner.example/hooks', '--events', 'all,loan.issued'])).toMatchObject({ code: 2, stderr: 'sandbox: --events all stands for every event type: give it alone, or list the types you want (not all with sandbox.loan.issued)\n' })
    expect(await webhook(strict, key, ['disable'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^sandbox: DELETE \/api\/sandbox\/webhooks answered 409 WEBHOOK_ENDPOINT_REQUIRED: /) })
    // With --json they are the USAGE document (an argument refused), as the README's table of codes says, not REFUSED's exit 1.
    for (const args of [['register', receiver.url], ['disable']]) {
      const refused = await webhook(strict, key, [...args, '--json'])
      expect([args[0], refused.code, JSON.parse(refused.stdout).error.code]).toEqual([args[0], 2, 'USAGE'])
    }
  })
})
