import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
})

describe('POST /api/sandbox/webhooks/retry with unknown ids of any length', () => {
  it('answers 404 naming each id, cut at 128 characters, so a 1 MiB body does not store a 2 MB answer for 24 hours', async () => {
    api = await createTestApi()
    const ids = Array.from({ length: 50 }, (_, i) => `whd_${i}_${'x'.repeat(20_000)}`)
    const answer = await api.post('/api/sandbox/webhooks/retry', { delivery_ids: ids })
    expect(answer.status).toBe(404)
    expect(answer.body.error_code).toBe('WEBHOOK_DELIVERY_NOT_FOUND')
    const shown = ids.map((id) => `${id.slice(0, 125)}...`)
    expect(answer.body.details).toEqual({ delivery_ids: shown })
    expect(answer.body.error).toBe(`No retryable delivery ${shown.join(', ')} (unknown, or already delivered).`)
    expect(JSON.stringify(answer.body).length).toBeLessThan(20_000)
    // An id of a plausible length is named whole, as before.
    const short = await api.post('/api/sandbox/webhooks/retry', { delivery_id: `whd_${'0'.repeat(124)}` })
    expect(short.body.details).toEqual({ delivery_ids: [`whd_${'0'.repeat(124)}`] })
  })
})
