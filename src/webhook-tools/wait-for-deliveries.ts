import { setTimeout as sleep } from 'node:timers/promises'
import { createSandboxClient, type SandboxClient, type WebhookAnswer } from '../client/sandbox-client.js'
import type { TransportOptions } from '../client/request-types.js'

/** One entry of the delivery log (GET /api/sandbox/webhooks). */
export type DeliveryEntry = WebhookAnswer['deliveries'][number]

const isSettled = (delivery: DeliveryEntry) => delivery.status === 'delivered' || delivery.status === 'failed'

/** What a read of the log gives: the deliveries waited for, and with them the whole log read (newest first). */
export type DeliveriesRead = DeliveryEntry[] | { deliveries: DeliveryEntry[]; log: DeliveryEntry[] }

/**
 * The delivery that DELIVERY waits behind while it is pending: an earlier one to the same target
 * that is retrying. Deliveries to one target go out in event order and only the queue's head is
 * tried, so there is at most one. LOG is the log as the API gives it, newest first.
 */
export function findBlocker(delivery: DeliveryEntry, log: readonly DeliveryEntry[]): DeliveryEntry | undefined {
  if (delivery.status !== 'pending' || !delivery.target) return undefined
  const at = log.findIndex((entry) => entry.id === delivery.id)
  if (at === -1) return undefined
  return log.slice(at + 1).find((entry) => entry.target === delivery.target && entry.status === 'retrying')
}

/**
 * Reads the log with `read` until every delivery it gives is delivered or has failed for good,
 * or `waitMs` passes, or one's next retry is due after that (it cannot be delivered in time),
 * or, when `read` gives the whole log too, one waits behind an earlier delivery whose next retry
 * is. Polls at 50 ms, doubling to 1 s: at most half the key's 120 requests a minute, and the
 * client waits out a 429. `read` gets a signal aborted at the end of the wait: a read still in
 * flight then (a slow server, a long Retry-After) is given up, and the last one read stands.
 */
export async function waitForDeliveries(read: (signal: AbortSignal) => Promise<DeliveriesRead>, first: DeliveriesRead, waitMs: number): Promise<{ deliveries: DeliveryEntry[]; waited_ms: number; log?: DeliveryEntry[] }> {
  const started = Date.now()
  const deadline = started + waitMs
  const dueAfterWait = (delivery: DeliveryEntry | undefined) => delivery?.status === 'retrying' && delivery.next_attempt_at !== null && Date.parse(delivery.next_attempt_at) > deadline
  let seen = splitRead(first)
  const hopeless = (delivery: DeliveryEntry) => dueAfterWait(delivery) || (seen.log !== undefined && dueAfterWait(findBlocker(delivery, seen.log)))
  const timeUp = new AbortController()
  const timer = setTimeout(() => timeUp.abort(new Error('the wait is over')), waitMs)
  try {
    for (let pause = 50; !seen.deliveries.every(isSettled) && !seen.deliveries.some(hopeless) && Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())))
      seen = splitRead(await read(timeUp.signal))
    }
  } catch (error) {
    if (!timeUp.signal.aborted || error !== timeUp.signal.reason) throw error
  } finally {
    clearTimeout(timer)
  }
  return { ...seen, waited_ms: Date.now() - started }
}

/**
 * A client for one read of the log during a wait: its requests end with the caller's signal, if
 * any, or the wait's (the client takes a signal per client, not per call).
 */
export function createWaitClient(options: TransportOptions, wait: AbortSignal): SandboxClient {
  return createSandboxClient({ ...options, signal: options.signal ? AbortSignal.any([options.signal, wait]) : wait })
}

function splitRead(read: DeliveriesRead): { deliveries: DeliveryEntry[]; log?: DeliveryEntry[] } {
  return Array.isArray(read) ? { deliveries: read } : read
}

/** Where a delivery goes: its target and URL (`forward http://...`); empty when the log shows neither, as a hosted server's may. */
export function describeReceiver(delivery: DeliveryEntry): string {
  return [delivery.target, delivery.url].filter(Boolean).join(' ')
}

/**
 * Why some of `deliveries` were not delivered after a wait, naming the first by its delivery id
 * (what `webhook retry` takes; an event id is shared by its endpoint and forward deliveries) and
 * its receiver, and what to do next; null when all were. With the LOG read (newest first), one
 * still pending behind an earlier delivery that is retrying names that one and its retry.
 */
export function explainUndelivered(deliveries: DeliveryEntry[], waitedMs: number, log?: readonly DeliveryEntry[]): string | null {
  const left = deliveries.filter((delivery) => delivery.status !== 'delivered')
  if (left.length === 0) return null
  const first = left[0]!
  const to = describeReceiver(first)
  const told = `${left.length} of ${deliveries.length} not delivered after ${(waitedMs / 1000).toFixed(1)} s: the first, ${first.id} (${first.event_type}${to ? ` to ${to}` : ''}), is ${first.status}`
  const blocker = log && findBlocker(first, log)
  if (blocker) {
    const state = [describeLastAnswer(blocker, 'last answer: '), blocker.next_attempt_at === null ? '' : `next attempt at ${blocker.next_attempt_at}`].filter(Boolean).join('; ')
    return `${told} behind ${blocker.id} (${blocker.event_type}), an earlier delivery to the same receiver, retrying${state ? ` (${state})` : ''}: deliveries to one receiver go in event order; sandbox webhook retry ${blocker.id} sends that one now, and the ones after it follow`
  }
  return `${told}${describeLastAnswer(first, ' (last answer: ', ')')}; ${describeNextStep(first)}`
}

/** What to do about an undelivered delivery that waits behind none. */
function describeNextStep(delivery: DeliveryEntry): string {
  if (delivery.status === 'failed') return `once the receiver answers 2xx, sandbox webhook retry ${delivery.id} sends it again`
  // Its schedule may be minutes away (10 min at the last step): a receiver back now need not wait.
  if (delivery.status === 'retrying' && delivery.next_attempt_at !== null) return `its next attempt is at ${delivery.next_attempt_at}; once the receiver answers 2xx, sandbox webhook retry ${delivery.id} sends it now`
  return 'sandbox webhook deliveries shows how it ends'
}

function describeLastAnswer(delivery: DeliveryEntry, before: string, after = ''): string {
  const last = delivery.last_status_code ?? delivery.last_error
  return last === null ? '' : `${before}${last}${after}`
}
