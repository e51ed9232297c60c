import { createSandboxClient } from '../client/sandbox-client.js'
import type { TransportOptions } from '../client/request-types.js'
import { createWaitClient, explainUndelivered, waitForDeliveries, type DeliveryEntry } from './wait-for-deliveries.js'

/** Which deliveries to put back, and whether to wait for them. */
export interface RetryDeliveriesOptions extends TransportOptions {
  /** Delivery ids (`whd_...`, at most 50); none retries every failed delivery (at most 50). */
  deliveryIds?: string[] | undefined
  /** Wait up to this long for them to be delivered (or to fail for good). */
  waitMs?: number | undefined
}

/** What the retry endpoint put back, and what became of it. */
export interface RetryReport {
  /** Ids the server put back in their queues (with a fresh schedule, still in event order), in its order. */
  retried: string[]
  /** Those deliveries as the log showed them last (one retried but no longer among the 50 newest is left out). */
  deliveries: DeliveryEntry[]
  waited_ms: number | null
  /** Why some were not delivered after the wait, or cannot be seen in the log; null when all were, or when not waiting. */
  problem: string | null
  /**
   * Without `deliveryIds`: ids of deliveries the log shows still retrying on their own schedule,
   * which the endpoint's "every failed one" leaves as they are (named, they go now).
   */
  still_retrying: string[]
}

/**
 * The RETRIED ids missing from DELIVERIES: the server keeps more failed deliveries than the log's
 * 50 newest, so `{}` may put back older ones whose outcome the log cannot show.
 */
export function findUnseenRetries(retried: string[], deliveries: DeliveryEntry[]): string[] {
  return retried.filter((id) => !deliveries.some((delivery) => delivery.id === id))
}

/**
 * POST /api/sandbox/webhooks/retry for `deliveryIds` (or every failed delivery), then, with
 * `waitMs`, polls the log until each is delivered or has failed for good. An unknown or delivered
 * id rejects with the server's 404 WEBHOOK_DELIVERY_NOT_FOUND, and nothing is retried.
 */
export async function retryDeliveries(options: RetryDeliveriesOptions): Promise<RetryReport> {
  const client = createSandboxClient(options)
  const ids = options.deliveryIds ?? []
  const answer = await client.retryWebhooks(ids.length === 0 ? {} : ids.length === 1 ? { delivery_id: ids[0]! } : { delivery_ids: ids })
  const pick = (log: DeliveryEntry[]) => answer.retried.flatMap((id) => log.filter((delivery) => delivery.id === id))
  const deliveries = pick(answer.deliveries)
  const stillRetrying = ids.length > 0 ? [] : answer.deliveries.filter((delivery) => delivery.status === 'retrying').reverse().map((delivery) => delivery.id)
  if (options.waitMs === undefined || answer.retried.length === 0) return { retried: answer.retried, deliveries, waited_ms: null, problem: null, still_retrying: stillRetrying }
  // The server keeps more failed deliveries than the log shows: `{}` may put back older ones.
  const unseen = findUnseenRetries(answer.retried, deliveries)
  const hidden = unseen.length === 0 ? null : `${unseen.length} of ${answer.retried.length} retried ${unseen.length === 1 ? 'is' : 'are'} older than the 50 newest deliveries the log shows, so their outcome cannot be seen: ${unseen.join(', ')}`
  const readLog = async (signal: AbortSignal) => {
    const { deliveries: log } = await createWaitClient(options, signal).getWebhook()
    return { deliveries: pick(log), log }
  }
  const { log, ...waited } = deliveries.length > 0 ? await waitForDeliveries(readLog, { deliveries, log: answer.deliveries }, options.waitMs) : { deliveries, waited_ms: 0, log: undefined }
  const problem = [explainUndelivered(waited.deliveries, waited.waited_ms, log), hidden].filter(Boolean).join('; ') || null
  return { retried: answer.retried, ...waited, problem, still_retrying: stillRetrying }
}
