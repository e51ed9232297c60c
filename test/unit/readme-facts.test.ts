import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ConflictReasons, ErrorCodes } from '../../src/errors/codes.js'
import { spillDeliveries } from '../../src/webhooks/delivery-spill.js'
import type { Delivery } from '../../src/webhooks/types.js'
import { checkWebhookUrl } from '../../src/webhooks/url-policy.js'

// Figures and names the README states, checked against what the code does: prose drifts silently.
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8').replace(/\s+/g, ' ')

describe('the README', () => {
  it('names every error code and every FLOW_CONFLICT reason', () => {
    const names = [...Object.keys(ErrorCodes), ...Object.keys(ConflictReasons)]
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(README))).toEqual([])
  })

  it('gives the backlog size at which a target\'s waiting deliveries move out of the document', () => {
    const stated = /Once a target has (\d+) or more deliveries waiting/.exec(README)
    expect(stated, 'the README sentence on long backlogs').not.toBeNull()
    const threshold = Number(stated![1])
    const waiting = (count: number) => ({
      endpoint: null,
      deliveries: Array.from({ length: count }, (_, seq) => ({ id: `whd_${seq}`, status: seq === 0 ? 'retrying' : 'pending', target: 'endpoint', seq }) as Delivery),
    })
    expect(spillDeliveries(waiting(threshold - 1)).batches).toHaveLength(0)
    expect(spillDeliveries(waiting(threshold)).batches).toHaveLength(1)
  })

  it('lists every host name suffix the URL rule refuses, and the length limit', async () => {
    const rule = /\*\*URL rule\.\*\*(.*?)\*\*Delivery\.\*\*/.exec(README)![1]!
    for (const name of ['localhost', 'a.localhost', 'a.local', 'a.internal', 'a.localdomain', 'a.home.arpa']) {
      const refused = await checkWebhookUrl(`https://${name}/hook`, { allowLocal: false, resolve: async () => ['203.0.113.1'] }).then(() => null, (error: { details?: { reason?: string } }) => error.details?.reason)
      expect([name, refused]).toEqual([name, 'local_name'])
      expect(rule, name).toContain(`\`${name.replace(/^a\./, '.')}\``)
    }
    const limit = Number(/at most ([\d,]+) characters/.exec(rule)![1]!.replace(',', ''))
    const long = (length: number) => `https://hooks.partner.example/${'a'.repeat(length - 'https://hooks.partner.example/'.length)}`
    const publicHost = { allowLocal: false, resolve: async () => ['8.8.8.8'] }
    await expect(checkWebhookUrl(long(limit), publicHost)).resolves.toBeInstanceOf(URL)
    await expect(checkWebhookUrl(long(limit + 1), publicHost)).rejects.toMatchObject({ details: { reason: 'too_long' } })
  })
})
