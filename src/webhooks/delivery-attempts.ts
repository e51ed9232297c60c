import type { SessionDoc } from '../server/session-doc.js'
import { createConnectionPool } from './connection-pool.js'
import { stringifyEvent } from './event-json.js'
import { describeSharedRefusal, type RecentRefusals } from './recent-refusals.js'
import { destinationKeyOf } from './send-destination.js'
import { probeConnection, sendWebhook, type SendOptions } from './sender.js'
import { signWebhook } from './signature.js'
import type { AttemptOutcome, Delivery, DeliveryTarget, StoredEndpoint } from './types.js'
import { isForbiddenAddress } from './url-policy.js'

/** What the attempts need to know of the server's webhook settings. */
export interface AttemptOptions {
  /** `--allow-local-webhooks`: do not refuse local or private addresses at delivery time. */
  allowLocal: boolean
  forward?: { url: string; secret: string }
  timeoutMs?: number
  /** Host name resolver for the delivery-time address check (default: system DNS). */
  resolveHost?: (host: string) => Promise<string[]>
}

/**
 * Sends deliveries and probes URLs over one pool of kept connections. Endpoint addresses are
 * checked when sending (DNS can change) unless local webhooks are allowed; the forward target is
 * the operator's own and never checked.
 */
export function createDeliveryAttempts(options: AttemptOptions, recent: RecentRefusals) {
  const pool = createConnectionPool()
  const checkedSend: SendOptions = { isForbidden: isForbiddenAddress, resolve: options.resolveHost, timeoutMs: options.timeoutMs, pool }
  const openSend: SendOptions = { timeoutMs: options.timeoutMs, pool }
  const sendOptionsFor = (target: DeliveryTarget): SendOptions => (target === 'endpoint' && !options.allowLocal ? checkedSend : openSend)

  /**
   * Sends one delivery to its target as configured now, signed when the connection is up.
   * `endpointNow` gives the session's endpoint at that moment: a send it no longer matches (the
   * endpoint disabled, or moved to another URL, meanwhile) is withdrawn, not made (`notSent`),
   * and one it does is signed with its secret then, a rotation's included.
   */
  async function attempt(doc: SessionDoc, delivery: Delivery, endpointNow: () => StoredEndpoint | null = () => doc.webhook.endpoint): Promise<AttemptOutcome & { url: string }> {
    const destination = delivery.target === 'forward' ? options.forward : doc.webhook.endpoint
    const body = delivery.body ?? (delivery.event ? stringifyEvent(delivery.event) : undefined)
    if (!destination || body === undefined) return { statusCode: null, error: 'no target configured', durationMs: 0, url: delivery.url }
    const { url } = destination
    const secretNow = delivery.target === 'forward' ? () => destination.secret : () => {
      const endpoint = endpointNow()
      return endpoint?.enabled && endpoint.url === url ? endpoint.secret : undefined
    }
    // Signed at the moment of sending, so the timestamp is that moment.
    const sign = () => {
      const secret = secretNow()
      return secret === undefined ? undefined : signWebhook({ secret, body, eventId: delivery.event_id, eventType: delivery.event_type }).headers
    }
    const outcome = await sendWebhook(url, body, sign, sendOptionsFor(delivery.target))
    return { ...outcome, url }
  }

  /** Whether `url` takes a connection now; a refusal noted a moment ago stands for a new try. */
  async function probe(url: string, target: DeliveryTarget): Promise<{ error: string | null; durationMs: number }> {
    const refusal = recent.find(url, Date.now())
    if (refusal) return { error: describeSharedRefusal(refusal, Date.now()), durationMs: 0 }
    const started = performance.now()
    const error = await probeConnection(url, sendOptionsFor(target))
    recent.note(url, { error, refused: error !== null }, Date.now())
    return { error, durationMs: Math.round((performance.now() - started) * 10) / 10 }
  }

  /** Where deliveries to `url` go, as their places in flight are counted. */
  const destinationOf = (url: string, target: DeliveryTarget): string => destinationKeyOf(url, sendOptionsFor(target))

  /** Starts none of the sends waiting for a place in flight, nor any later one (the server is stopping). */
  const stopQueued = (): void => pool.gates.close()

  return { attempt, probe, destinationOf, stopQueued, close: () => pool.close() }
}
