import { describe, expect, it } from 'vitest'
import type { SandboxEvent } from '../../src/domain/types.js'
import { createWebhookState, enqueueEvents, listTargets } from '../../src/webhooks/deliveries.js'
import type { StoredEndpoint } from '../../src/webhooks/types.js'

const NOW = '2026-11-22T10:00:00.000Z'
let nextId = 0
const newId = (prefix: string) => `${prefix}_${++nextId}`

function event(type: string): SandboxEvent {
  return { id: newId('evt'), type, created_at: NOW, api_version: '0.3.0', data: { object: {} } } as unknown as SandboxEvent
}

const ENDPOINT: StoredEndpoint = { id: 'we_1', url: 'https://partner.example/hook', enabled: true, events: ['sandbox.loan.issued'], secret: 'whsec_endpoint', createdAt: NOW, updatedAt: NOW }
const FORWARD = { url: 'http://127.0.0.1:3000/hook', secret: 'whsec_forward' }

describe('the forward URL (serve --webhook-forward-to)', () => {
  it('gets every event, whatever the endpoint subscribes to', () => {
    const targets = listTargets(ENDPOINT, FORWARD)
    const state = enqueueEvents(createWebhookState(), [event('sandbox.loan.issued'), event('sandbox.partner.updated')], targets, NOW, newId)
    expect(state.deliveries.map((delivery) => [delivery.event_type, delivery.target])).toEqual([
      ['sandbox.loan.issued', 'endpoint'],
      ['sandbox.loan.issued', 'forward'],
      ['sandbox.partner.updated', 'forward'],
    ])
  })

  it('gets them while the endpoint is disabled, which gets none', () => {
    const targets = listTargets({ ...ENDPOINT, enabled: false }, FORWARD)
    const state = enqueueEvents(createWebhookState(), [event('sandbox.loan.issued')], targets, NOW, newId)
    expect(state.deliveries.map((delivery) => delivery.target)).toEqual(['forward'])
  })
})
