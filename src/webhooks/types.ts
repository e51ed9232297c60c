import type { EventType, SandboxEvent } from '../domain/types.js'

// Kept in the domain, which `run --list` and the scenario checks load without the webhook sender.
export { EVENT_TYPES } from '../domain/event-types.js'

/** The key's webhook endpoint as stored (with its secret). */
export interface StoredEndpoint {
  id: string
  url: string
  enabled: boolean
  events: EventType[]
  secret: string
  createdAt: string
  updatedAt: string
}

/** Where a delivery goes: the key's endpoint, or the server's `--webhook-forward-to` URL. */
export type DeliveryTarget = 'endpoint' | 'forward'

/** Every delivery target, in the order a session's queues are worked. */
export const DELIVERY_TARGETS: readonly DeliveryTarget[] = ['endpoint', 'forward']

/** Delivery status values (decisions.md). */
export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed'

/** One delivery of one event to one target, with its attempts (the delivery log). */
export interface Delivery {
  id: string
  event_id: string
  event_type: EventType
  target: DeliveryTarget
  url: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string | null
  last_status_code: number | null
  last_error: string | null
  created_at: string
  updated_at: string
  /**
   * The request whose change queued the event: its answer's `request_id`, and its request log
   * line's. Absent on deliveries queued by an earlier version.
   */
  request_id?: string
  /** Queue order within the session (deliveries of an earlier version have none: they come first). */
  seq?: number
  /**
   * `attempts` when the retry endpoint last put it back: the schedule starts again from there,
   * while `attempts` keeps counting every POST the receiver got.
   */
  schedule_base?: number
  /** The event to send; its JSON text (stringifyEvent) is the body. Dropped once delivered. */
  event?: SandboxEvent
  /** Documents of an earlier version hold the body text instead. */
  body?: string
}

/**
 * Waiting deliveries of one target moved out of the session document into a batch of their own
 * (see delivery-spill.ts): they sit, in queue order, between the deliveries kept before and after.
 */
export interface SpilledRun {
  batch: number
  target: DeliveryTarget
  first_seq: number
  last_seq: number
  count: number
}

/** The webhook part of a session document. */
export interface WebhookState {
  endpoint: StoredEndpoint | null
  deliveries: Delivery[]
  /** Backlog moved out of the document, oldest first; absent when there is none. */
  spilled?: SpilledRun[]
  /** The `seq` of the next delivery queued, and the number of the next spilled batch. */
  next_seq?: number
  next_spill?: number
}

/** The outcome of one delivery attempt. */
export interface AttemptOutcome {
  statusCode: number | null
  error: string | null
  durationMs: number
  /** True when no connection was made at all (refused, unreachable, forbidden, timed out connecting). */
  refused?: boolean
  /** True when nothing was tried: the send waited for a place in flight until the server stopped. */
  notSent?: boolean
  /** The start of the answer's body, decoded as UTF-8, when the send asked for it (`keepAnswerBytes`). */
  answer?: string
}
