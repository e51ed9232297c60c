import type { z } from 'zod'
import type { webhookEndpointViewSchema, webhookStateViewSchema } from '../../schemas/responses/webhook-views.js'
import { createEvent } from '../../domain/events.js'
import { createTestEventObject } from '../../webhooks/test-event.js'
import type { EventType } from '../../domain/types.js'
import { SandboxError } from '../../errors/sandbox-error.js'
import { parseBody } from '../../schemas/parse-body.js'
import { emptyBodySchema, webhookEndpointSchema, webhookRetrySchema, type WebhookEndpointInput, type WebhookRetryInput } from '../../schemas/webhooks.js'
import { requeueDeliveries } from '../../webhooks/deliveries.js'
import { showDelivery, viewDeliveries } from '../../webhooks/delivery-views.js'
import { generateWebhookSecret, previewSecret } from '../../webhooks/signature.js'
import { EVENT_TYPES, type StoredEndpoint, type WebhookState } from '../../webhooks/types.js'
import { checkWebhookUrl, findHostToResolve, resolveHostWithSystem } from '../../webhooks/url-policy.js'
import { createId } from '../ids.js'
import { findEventTypeMeant } from '../../domain/event-types.js'
import type { RouteContext, RouteSpec } from '../route-types.js'
import { createDomainContext } from '../services.js'
import { sessionSlotOf, type SessionDoc } from '../session-doc.js'
import { clipText } from '../../text/clip-text.js'

const MAX_RETRY_BATCH = 50
/**
 * Longest unknown id the 404 repeats whole (real ones have 28 characters). It is stored with its
 * Idempotency-Key for 24 hours: repeating 50 ids of 20,000 characters twice made each 1 MiB
 * request store a 2 MB answer, 240 MB a minute for one key within the rate limit.
 */
const MAX_SHOWN_ID = 128

type WebhookEndpointView = z.infer<typeof webhookEndpointViewSchema>
type WebhookStateView = z.infer<typeof webhookStateViewSchema>

/** The endpoint as the API shows it: never the secret, except where the spec allows it. */
function viewEndpoint(endpoint: StoredEndpoint | null, revealSecret: boolean): WebhookEndpointView | null {
  if (!endpoint) return null
  const { secret, ...shown } = endpoint
  return { ...shown, secretPreview: previewSecret(secret), ...(revealSecret ? { signingSecret: secret } : {}) }
}

/** The endpoint and delivery log, with the attempts parked heads hold (dispatcher.ts) counted in. */
function answer(state: WebhookState, ctx: RouteContext, revealSecret = false): WebhookStateView {
  const shown = ctx.services.dispatcher.overlay(sessionSlotOf(ctx.principal), state)
  return { endpoint: viewEndpoint(state.endpoint, revealSecret), deliveries: viewDeliveries(shown, ctx.services.webhooks.forwardUrl) }
}

function parseEvents(events: unknown): EventType[] {
  if (events === undefined) return [...EVENT_TYPES]
  const unknown = Array.isArray(events) ? events.filter((type) => !EVENT_TYPES.includes(type as EventType)) : []
  if (!Array.isArray(events) || events.length === 0 || unknown.length > 0) {
    throw new SandboxError('WEBHOOK_EVENTS_INVALID', Array.isArray(events) && events.length > 0
      ? `Unknown event types: ${unknown.map(describeUnknownEvent).join(', ')}.`
      : 'events must be a non-empty list of event types (or left out for all).', { unknown_events: unknown, allowed: EVENT_TYPES })
  }
  return [...new Set(events as EventType[])]
}

/** `sandbox.loan.isued (did you mean sandbox.loan.issued?)`; `loan.issued` names the full name it left out. */
function describeUnknownEvent(type: unknown): string {
  const meant = typeof type === 'string' ? findEventTypeMeant(type) : undefined
  return meant === undefined ? String(type) : `${type} (did you mean ${meant}?)`
}

function requireEndpoint(doc: SessionDoc): StoredEndpoint {
  const endpoint = doc.webhook.endpoint
  if (!endpoint?.enabled) {
    throw new SandboxError('WEBHOOK_ENDPOINT_REQUIRED', endpoint ? 'The webhook endpoint is disabled; enable it again with POST /api/sandbox/webhooks.' : 'Configure a webhook endpoint first with POST /api/sandbox/webhooks.')
  }
  return endpoint
}

/** The endpoint's host looked up before the key's lock (see WriteRoute.prepare), or why it failed. */
interface EarlyLookup {
  host: string
  addresses?: string[]
  error?: unknown
}

/**
 * Resolves the host of the URL in BODY before the key's lock: a resolver that takes seconds (a
 * name whose DNS does not answer) held every other write of the key for that long under the lock.
 */
async function lookUpEarly(body: unknown, ctx: RouteContext): Promise<EarlyLookup | undefined> {
  const { webhooks } = ctx.services
  const raw = body !== null && typeof body === 'object' ? (body as { url?: unknown }).url : undefined
  const host = findHostToResolve(raw, { allowLocal: webhooks.allowLocal })
  if (host === undefined) return undefined
  try {
    return { host, addresses: await (webhooks.resolve ?? resolveHostWithSystem)(host) }
  } catch (error) {
    // Told under the lock, after the replay check: a replayed registration answers as it did.
    return { host, error }
  }
}

async function saveEndpoint(doc: SessionDoc, input: WebhookEndpointInput, ctx: RouteContext, early?: EarlyLookup) {
  const { webhooks } = ctx.services
  const resolve = async (host: string) => {
    if (!early || host !== early.host) return (webhooks.resolve ?? resolveHostWithSystem)(host)
    if (early.error !== undefined) throw early.error
    return early.addresses!
  }
  const url = await checkWebhookUrl(input.url, { allowLocal: webhooks.allowLocal, resolve })
  const events = parseEvents(input.events)
  const current = doc.webhook.endpoint
  const now = new Date().toISOString()
  const revealSecret = !current || input.rotate_secret === true
  const endpoint: StoredEndpoint = {
    id: current?.id ?? createId('we'),
    url: url.href,
    enabled: true,
    events,
    secret: revealSecret ? generateWebhookSecret() : current!.secret,
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  }
  const webhook = { ...doc.webhook, endpoint }
  return { doc: { ...doc, webhook }, body: answer(webhook, ctx, revealSecret) }
}

function sendTestEvent(doc: SessionDoc, ctx: RouteContext) {
  const endpoint = requireEndpoint(doc)
  const domain = createDomainContext(ctx.services, ctx.principal)
  const event = createEvent(domain, 'sandbox.webhook.test', createTestEventObject(endpoint.id))
  // Queued here rather than at commit so the answer can show the delivery it created.
  const next = ctx.services.dispatcher.prepareCommit({ ...doc, outbox: [...doc.outbox, event] }, domain.now, ctx.requestId)
  const delivery = next.webhook.deliveries.find((item) => item.event_id === event.id)!
  const shown = answer(next.webhook, ctx)
  // As the log shows it: one queued behind a retrying delivery has that one's next attempt time.
  return { doc: next, body: { event: { id: event.id, type: event.type }, delivery: shown.deliveries.find((item) => item.id === delivery.id) ?? showDelivery(delivery), ...shown } }
}

async function retry(doc: SessionDoc, input: WebhookRetryInput, ctx: RouteContext) {
  const deliveries = doc.webhook.deliveries
  const ids = input.delivery_id ? [input.delivery_id, ...(input.delivery_ids ?? [])] : input.delivery_ids
  const chosen = ids ? [...new Set(ids)] : deliveries.filter((delivery) => delivery.status === 'failed').slice(0, MAX_RETRY_BATCH).map((delivery) => delivery.id)
  const retryable = new Set(deliveries.filter((delivery) => delivery.status !== 'delivered').map((delivery) => delivery.id))
  let missing = chosen.filter((id) => !retryable.has(id))
  // Deliveries of a long backlog wait in spilled batches: still queued, never attempted, so
  // retrying one leaves it as it is.
  for (const run of doc.webhook.spilled ?? []) {
    if (missing.length === 0) break
    const queued = new Set((await ctx.services.sessions.readSpilled(ctx.principal, run.batch)).map((delivery) => delivery.id))
    missing = missing.filter((id) => !queued.has(id))
  }
  if (missing.length > 0) {
    const shown = missing.map((id) => clipText(id, MAX_SHOWN_ID))
    throw new SandboxError('WEBHOOK_DELIVERY_NOT_FOUND', `No retryable delivery ${shown.join(', ')} (unknown, or already delivered).`, { delivery_ids: shown })
  }
  // From the log as GET shows it: the refused attempts parked heads hold count too.
  const webhook = requeueDeliveries(ctx.services.dispatcher.overlay(sessionSlotOf(ctx.principal), doc.webhook), chosen, new Date().toISOString())
  return { doc: { ...doc, webhook }, body: { retried: chosen, ...answer(webhook, ctx) } }
}

/** The webhook endpoints of spec 4.7, as [method, path, route]. */
export function createWebhookRoutes(): Array<[string, string, RouteSpec]> {
  return [
    ['GET', '/api/sandbox/webhooks', { kind: 'read', session: true, read: (doc, ctx) => answer(doc!.webhook, ctx) }],
    ['POST', '/api/sandbox/webhooks', {
      kind: 'write',
      parse: (body) => parseBody(webhookEndpointSchema, body),
      prepare: lookUpEarly,
      execute: (doc, input, ctx, early) => saveEndpoint(doc, input as WebhookEndpointInput, ctx, early as EarlyLookup | undefined),
    }],
    ['DELETE', '/api/sandbox/webhooks', {
      kind: 'write',
      idempotent: false,
      // No body is read as {}; a body that is JSON but not an object is refused as on every write.
      parse: (body) => parseBody(emptyBodySchema, body),
      execute(doc, _input, ctx) {
        const endpoint = doc.webhook.endpoint
        if (!endpoint) throw new SandboxError('WEBHOOK_ENDPOINT_REQUIRED', 'There is no webhook endpoint to disable.')
        const webhook = { ...doc.webhook, endpoint: { ...endpoint, enabled: false, updatedAt: new Date().toISOString() } }
        return { doc: { ...doc, webhook }, body: answer(webhook, ctx) }
      },
    }],
    ['POST', '/api/sandbox/webhooks/test', {
      kind: 'write',
      parse: (body) => parseBody(emptyBodySchema, body),
      execute: (doc, _input, ctx) => sendTestEvent(doc, ctx),
    }],
    ['POST', '/api/sandbox/webhooks/retry', {
      kind: 'write',
      parse: (body) => parseBody(webhookRetrySchema, body),
      execute: (doc, input, ctx) => retry(doc, input as WebhookRetryInput, ctx),
    }],
  ]
}
