import { createSandboxClient, type SandboxClient } from '../client/sandbox-client.js'
import type { TransportOptions } from '../client/request-types.js'
import type { EventType } from '../domain/types.js'
import { EVENT_TYPES, findEventTypeMeant, takesEvent } from '../domain/event-types.js'
import { LOAN_EVENTS, walkToEvent, type TriggerRequest } from './trigger-walks.js'
import { createWaitClient, explainUndelivered, waitForDeliveries, type DeliveryEntry } from './wait-for-deliveries.js'

/** What `triggerEvent` needs: where, which key, which event. */
export interface TriggerEventOptions extends TransportOptions {
  event: EventType
  /** An active loan of the key to act on, for the loan events; default: a new small loan. */
  loanId?: string | undefined
  /** Wait up to this long for the deliveries to be delivered (or to fail for good). */
  waitMs?: number | undefined
  onRequest?: ((request: TriggerRequest) => void) | undefined
}

/** What a trigger did, and what became of its deliveries. */
export interface TriggerReport {
  event: EventType
  requests: TriggerRequest[]
  /** The key's endpoint as the log showed it before the walk; null when it has none. */
  endpoint: { url: string; enabled: boolean; events: EventType[] } | null
  /** Deliveries of the walk's events that the log gained, oldest first, as last read. */
  deliveries: DeliveryEntry[]
  /** How long it waited for them; null without `waitMs`. */
  waited_ms: number | null
  /** Why the event did not (or not yet) reach a receiver; null when it did, or was queued and not waited for. */
  problem: string | null
}

/** The trigger cannot start: an event type it does not know, or `loanId` given for an event that takes none. */
export class TriggerUsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TriggerUsageError'
  }
}

/** Throws a TriggerUsageError for an event type that is none (from JavaScript, or a string read from a file), before any request. */
function checkTriggerEvent(event: string): void {
  if (EVENT_TYPES.includes(event as EventType)) return
  const meant = findEventTypeMeant(event)
  throw new TriggerUsageError(`unknown event ${JSON.stringify(event)}${meant === undefined ? '' : ` (did you mean ${meant}?)`}: one of ${EVENT_TYPES.join(', ')}`)
}

/**
 * Throws a TriggerUsageError when `loanId` is given for an event that takes none: exported so
 * the CLI checks before it prints its `triggering ...` line, which a usage error should not follow.
 */
export function checkTriggerLoan(event: EventType, loanId: string | undefined): void {
  if (loanId !== undefined && !LOAN_EVENTS.includes(event)) {
    const issues = event === 'sandbox.loan.issued' || event === 'sandbox.loan_application.updated'
    throw new TriggerUsageError(`a loan applies only to ${LOAN_EVENTS.join(', ')}; ${event} ${issues ? 'opens a loan of its own' : 'involves no loan'}`)
  }
}

/** Why nothing of `event` was queued, from the endpoint the key had. */
function explainNothingQueued(event: EventType, endpoint: TriggerReport['endpoint']): string {
  const forward = 'and the server forwards no events (sandbox serve --webhook-forward-to URL)'
  if (!endpoint) return `no delivery of ${event} was queued: this key has no webhook endpoint (POST /api/sandbox/webhooks registers one), ${forward}`
  if (!endpoint.enabled) return `no delivery of ${event} was queued: this key's endpoint is disabled (POST /api/sandbox/webhooks enables it again), ${forward}`
  if (!takesEvent(endpoint.events, event)) {
    return `no delivery of ${event} was queued: this key's endpoint is subscribed to ${endpoint.events.join(', ')} only, ${forward}`
  }
  return `no delivery of ${event} appeared in the key's delivery log (GET /api/sandbox/webhooks)`
}

/** What tells the walk's deliveries from others the log gains meanwhile (another trigger's, a test's on the same key). */
interface WalkTrace {
  seen: Set<string>
  types: Set<EventType>
  /**
   * The walk's requests that sent events; undefined reads the log by type alone: a replayed answer
   * does not carry the id its deliveries have, and a hosted server's log may have no request ids.
   */
  requestIds: Set<string> | undefined
}

/** The walk's deliveries, oldest first, and the whole log read (newest first, as the API gives it). */
async function readLog(client: SandboxClient, trace: WalkTrace): Promise<{ deliveries: DeliveryEntry[]; log: DeliveryEntry[] }> {
  const { deliveries: log } = await client.getWebhook()
  const isWalks = (delivery: DeliveryEntry) => !trace.requestIds || typeof delivery.request_id !== 'string' || trace.requestIds.has(delivery.request_id)
  return { deliveries: log.filter((delivery) => !trace.seen.has(delivery.id) && trace.types.has(delivery.event_type) && isWalks(delivery)).reverse(), log }
}

/**
 * Walks the API to make the server send one event type to the key's receivers (its endpoint, and
 * serve's forward URL), as Stripe's `trigger` does: a new small loan where the event needs one
 * (or `loanId`), every step with its own Idempotency-Key. Then reads which deliveries the log
 * gained and, with `waitMs`, polls it until they are delivered or have failed for good.
 */
export async function triggerEvent(options: TriggerEventOptions): Promise<TriggerReport> {
  const { event, loanId, waitMs } = options
  checkTriggerEvent(event)
  checkTriggerLoan(event, loanId)
  const client = createSandboxClient(options)
  const before = await client.getWebhook()
  const endpoint = before.endpoint && { url: before.endpoint.url, enabled: before.endpoint.enabled, events: before.endpoint.events }
  const seen = new Set(before.deliveries.map((delivery) => delivery.id))
  const requests = await walkToEvent(client, event, { loanId, onRequest: options.onRequest })
  const sending = requests.filter((request) => request.events.length > 0)
  const trace: WalkTrace = {
    seen,
    types: new Set(sending.flatMap((request) => request.events)),
    requestIds: sending.some((request) => request.replayed || request.request_id === null) ? undefined : new Set(sending.map((request) => request.request_id!)),
  }
  const read = await readLog(client, trace)
  const { deliveries } = read
  if (!deliveries.some((delivery) => delivery.event_type === event)) {
    return { event, requests, endpoint, deliveries, waited_ms: null, problem: explainNothingQueued(event, endpoint) }
  }
  if (waitMs === undefined) return { event, requests, endpoint, deliveries, waited_ms: null, problem: null }
  const { log, ...waited } = await waitForDeliveries((signal) => readLog(createWaitClient(options, signal), trace), read, waitMs)
  return { event, requests, endpoint, ...waited, problem: explainUndelivered(waited.deliveries, waited.waited_ms, log) }
}
