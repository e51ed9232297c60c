import type { ExpectedEvents } from './event-log.js'
import type { FuzzClient } from './fuzz-client.js'
import type { Random } from './random.js'
import type { FullModelConfig } from './transitions.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A POST whose outcome the server stored: replaying it must answer the same bytes. */
export interface StoredCall { path: string; idem: string; raw: string; status: number; text: string }

/** What the walk knows of one key. */
export interface KeyModel {
  loans: any
  profile: any
  endpoint: any
  stored: StoredCall[]
  rejected: Array<{ path: string; idem: string }>
  events: ExpectedEvents
  /** Every Idempotency-Key sent on this key. */
  used: Set<string>
  /** Deliveries the log has shown as delivered. */
  delivered: Set<string>
  /** Events whose endpoint delivery the retry endpoint may have put back (so may arrive out of order). */
  retried: Set<string>
}

/** The walk's shared parts, as the step functions see them. */
export interface Walk {
  random: Random
  client: FuzzClient
  models: KeyModel[]
  config(): FullModelConfig
  /** The loopback receiver's base URL, for webhook endpoints. */
  base: string
  /** Keys whose `/recover` endpoint answers 500 for now. */
  down: Set<number>
  /** Set once the wall clock has been stepped: timestamps need not follow the order of events. */
  clockMoved?: boolean
}

/** Balances every key starts with (fixtures/wallet.json). */
export const INITIAL = { BTC: 2, USDT: 10000 }

/** A body without the envelope fields that differ between answers. */
export function strip(body: any): any {
  const { request_id: _r, idempotency_replayed: _i, ...rest } = body ?? {}
  return rest
}

/** An endpoint as GET shows it (never the secret). */
export function stripSecret(endpoint: any): any {
  if (!endpoint) return endpoint
  const { signingSecret: _s, ...rest } = endpoint
  return rest
}

/** An answer's text without what differs between a first answer and its replays. */
export function normalize(text: string): string {
  return text.replace(/^\{"request_id":"[^"]*",?/, '{').replace(/,?"idempotency_replayed":(true|false)\}$/, '}')
}

/** Deep equality through JSON (key order included, as the API's answers are deterministic). */
export function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** JSON.parse that answers undefined for text that is not JSON. */
export function parseLoose(raw: string | undefined): any {
  if (raw === undefined) return {}
  try {
    return JSON.parse(raw.replace(/^\ufeff/, ''))
  } catch {
    return undefined
  }
}
