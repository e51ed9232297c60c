import type { KeyedMutexLike } from '../server/services.js'
import { principalOfSlot, type SessionDoc, type SessionStore } from '../server/session-store.js'
import { recordAttempt } from './deliveries.js'
import { reportRefusedAttempt, type DeliveryReport } from './delivery-report.js'
import { describeSharedRefusal, type RecentRefusals } from './recent-refusals.js'
import { probeConnection, type SendOptions } from './sender.js'
import type { Delivery, DeliveryTarget } from './types.js'

/** A head delivery waiting for its retry: what retrying it without the session document takes. */
interface WaitingHead {
  id: string
  event_id: string
  event_type: Delivery['event_type']
  target: DeliveryTarget
  /** Where it goes, as the session was when the worker last read it. */
  url: string
  attempts: number
  /** When it is due (ms since epoch). */
  next: number
}

/** What refused retries need of the dispatcher. */
export interface RefusedRetriesOptions {
  sessions: SessionStore
  mutex: KeyedMutexLike
  retryScheduleMs: readonly number[]
  forward?: { url: string }
  /** How deliveries to a target are sent (address checks, timeout, shared connections). */
  sendOptionsFor: (target: DeliveryTarget) => SendOptions
  /** URLs that refused a moment ago: a probe of one is not made again (recent-refusals.ts). */
  recent: RecentRefusals
}

/**
 * Retries of receivers that do not even take a connection, made without reading or writing the
 * session document: the failed attempts become a patch that the session store applies on every
 * load until the session's next write (at the latest when the server stops). Reading,
 * re-serializing and compressing a document for every retry cost ~0.5 ms, more than a key's four
 * API requests together, so under a steady load a dead receiver took a third of a core
 * (measured). A crash loses these records harmlessly, like staged writes: the attempts run again.
 */
export function createRefusedRetries(options: RefusedRetriesOptions) {
  const { sessions, mutex, retryScheduleMs: schedule } = options
  /** Per sleeping worker, the heads it waits to retry, as read from the session before it slept. */
  const waiting = new Map<string, WaitingHead[]>()

  function toWaitingHead(doc: SessionDoc, delivery: Delivery): WaitingHead | undefined {
    const url = delivery.target === 'forward' ? options.forward?.url : doc.webhook.endpoint?.url
    if (url === undefined) return undefined
    const { id, event_id, event_type, target, attempts } = delivery
    return { id, event_id, event_type, target, url, attempts, next: Date.parse(delivery.next_attempt_at ?? '') }
  }

  async function probe(head: WaitingHead): Promise<{ error: string | null; durationMs: number }> {
    const refusal = options.recent.find(head.url, Date.now())
    if (refusal) return { error: describeSharedRefusal(refusal, Date.now()), durationMs: 0 }
    const started = performance.now()
    const error = await probeConnection(head.url, options.sendOptionsFor(head.target))
    options.recent.note(head.url, { error, refused: error !== null }, Date.now())
    return { error, durationMs: Math.round((performance.now() - started) * 10) / 10 }
  }

  /** Remembers the heads a worker goes to sleep on (read from `doc`). */
  function remember(slot: string, doc: SessionDoc, heads: Delivery[]): void {
    const waits = heads.map((delivery) => toWaitingHead(doc, delivery))
    if (waits.every((head) => head !== undefined)) waiting.set(slot, waits as WaitingHead[])
    else waiting.delete(slot)
  }

  /**
   * Retries the due heads of a waking worker if none of their receivers takes a connection: the
   * attempts' reports and when to wake next (no reports when woken before any head is due). Null,
   * having changed nothing, when the document is needed: no heads remembered, a receiver that is
   * up, a head's last attempt (its failure is written at once), or heads forgotten meanwhile (a
   * commit changed them).
   */
  async function retry(slot: string, isClosed: () => boolean): Promise<{ reports: DeliveryReport[]; wakeAt: number } | null> {
    const heads = waiting.get(slot)
    if (!heads) return null
    const due = heads.filter((head) => head.next <= Date.now())
    // Timers may fire a millisecond before Date.now() reaches their time: sleep on, unread.
    if (due.length === 0) return { reports: [], wakeAt: Math.min(...heads.map((head) => head.next)) }
    if (due.some((head) => schedule[head.attempts] === undefined)) return null
    const probes = await Promise.all(due.map(probe))
    if (isClosed() || probes.some(({ error }) => error === null)) return null
    const finished = Date.now()
    const outcomes = due.map((head, i) => ({ head, outcome: { statusCode: null, error: probes[i]!.error, durationMs: probes[i]!.durationMs, url: head.url } }))
    const wakeAt = await mutex.run(slot, async () => {
      if (waiting.get(slot) !== heads) return null
      sessions.patch(principalOfSlot(slot), (doc) => {
        let webhook = doc.webhook
        for (const { head, outcome } of outcomes) webhook = recordAttempt(webhook, head.id, outcome, schedule, finished)
        return { ...doc, webhook }
      })
      const updated = heads.map((head) => (due.includes(head) ? { ...head, attempts: head.attempts + 1, next: finished + schedule[head.attempts]! } : head))
      waiting.set(slot, updated)
      return Math.min(...updated.map((head) => head.next))
    })
    if (wakeAt === null) return null
    const at = new Date(finished).toISOString()
    const reports = outcomes.map(({ head, outcome }) => reportRefusedAttempt(head, head.attempts + 1, outcome.error, outcome.durationMs, at))
    return { reports, wakeAt }
  }

  return { remember, retry, forget: (slot: string) => void waiting.delete(slot) }
}
