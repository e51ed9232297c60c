import type { Principal } from '../server/auth.js'
import { sessionSlotOf, type SessionDoc } from '../server/session-doc.js'
import { createId } from '../server/ids.js'
import { enqueueEvents, listTargets } from './deliveries.js'
import { reportRefusedAttempt, type DeliveryReport } from './delivery-report.js'
import { toParkedHead, type ParkedHead } from './parked-head.js'
import type { AttemptOptions } from './delivery-attempts.js'
import { findSharedRefusals, type RecentRefusals } from './recent-refusals.js'
import type { WebhookState } from './types.js'

/** A session document ready to write, with the heads whose first attempt a recent refusal stands for (see `prepareWrite`). */
export interface PreparedWrite {
  doc: SessionDoc
  reports: DeliveryReport[]
  parked: ParkedHead[]
}

/**
 * What a commit's write carries for webhooks: its new events as deliveries, in the same document,
 * and the first attempts a refusal of a moment ago stands for. Written together with the change
 * that made the events, so a crash never keeps one without the other.
 */
export function createCommitDeliveries(options: {
  forward?: AttemptOptions['forward']
  retryScheduleMs: readonly number[]
  onDelivery?: (report: DeliveryReport) => void
  recent: RecentRefusals
}) {
  /**
   * Moves a commit's new events into deliveries, in the same document (called before saving);
   * `requestId` is the request that made them.
   */
  function prepareCommit(doc: SessionDoc, now: string, requestId?: string): SessionDoc {
    if (doc.outbox.length === 0) return doc
    const targets = listTargets(doc.webhook.endpoint, options.forward)
    return { ...doc, outbox: [], webhook: enqueueEvents(doc.webhook, doc.outbox, targets, now, createId, requestId) }
  }

  /**
   * prepareCommit for a request's commit (`base` is the webhook state the request started from):
   * a new queue head whose URL refused a connection a moment ago gets that refusal as its first
   * attempt, held by the head parked for its retry rather than written (recent-refusals.ts).
   */
  function prepareWrite(principal: Principal, doc: SessionDoc, base: WebhookState, now: number, requestId?: string): PreparedWrite {
    const at = new Date(now).toISOString()
    const prepared = prepareCommit(doc, at, requestId)
    const shared = findSharedRefusals(base, prepared.webhook, (url) => options.recent.find(url, now), now)
    if (shared.length === 0) return { doc: prepared, reports: [], parked: [] }
    const slot = sessionSlotOf(principal)
    const next = now + options.retryScheduleMs[0]!
    const heads = shared.map(({ delivery, error }) => ({ ...toParkedHead(slot, delivery, delivery.url), held: 1, lastError: error, lastAt: now, next }))
    const reports = options.onDelivery ? shared.map(({ delivery, error }) => reportRefusedAttempt(delivery, 1, error, 0, at, next)) : []
    return { doc: prepared, reports, parked: heads }
  }

  return { prepareCommit, prepareWrite }
}
