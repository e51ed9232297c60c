import { escapeControls as show } from '../text/escape-controls.js'
import type { WebhookAnswer } from '../client/sandbox-client.js'
import { EVENT_TYPES } from '../webhooks/types.js'
import { describeReceiver, findBlocker, type DeliveryEntry } from '../webhook-tools/wait-for-deliveries.js'
import { chalk, formatClock, formatCount } from './output.js'

/** A delivery's state: ✓ delivered, … pending, ✗ retrying or failed, with the last answer and attempts. */
function describeState(delivery: DeliveryEntry): string {
  const attempts = formatCount(delivery.attempts, 'attempt')
  const last = delivery.last_status_code ?? (delivery.last_error ? show(delivery.last_error) : null)
  const detail = [last, attempts, delivery.status === 'retrying' && delivery.next_attempt_at ? `next at ${formatClock(delivery.next_attempt_at)}` : null].filter(Boolean).join(', ')
  if (delivery.status === 'delivered') return `${chalk.green('✓')} delivered ${chalk.dim(`(${detail})`)}`
  if (delivery.status === 'pending') return `${chalk.dim('…')} pending${delivery.attempts > 0 ? ` ${chalk.dim(`(${detail})`)}` : ''}`
  return `${chalk.red('✗')} ${delivery.status === 'failed' ? chalk.red('failed') : chalk.yellow('retrying')} (${detail})`
}

/**
 * One delivery of the log on one line: the local time of `clock`, id (what `webhook retry` takes),
 * event type, target and URL, state; with `requestId`, the request whose change queued it, as
 * `sandbox logs` and serve's own lines show it, so one `grep req_...` finds both.
 */
export function formatDelivery(delivery: DeliveryEntry, options: { clock?: 'created_at' | 'updated_at'; requestId?: boolean } = {}): string {
  const to = show(describeReceiver(delivery))
  const clock = options.clock ? `${formatClock(delivery[options.clock])} ` : ''
  const request = options.requestId && delivery.request_id ? `  ${chalk.dim(show(delivery.request_id))}` : ''
  return `  ${clock}${chalk.dim(show(delivery.id))}  ${show(delivery.event_type).padEnd(33)} ${to ? `${to}  ` : ''}${describeState(delivery)}${request}`
}

/** A heading, then each delivery; after no wait, a hint where the pending ones' outcome shows. */
export function formatDeliveries(deliveries: DeliveryEntry[], waitedMs: number | null, heading: string): string[] {
  if (deliveries.length === 0) return []
  const lines = [waitedMs === null ? `${heading}:` : `${heading}, after ${(waitedMs / 1000).toFixed(1)} s:`]
  for (const delivery of deliveries) lines.push(formatDelivery(delivery))
  if (waitedMs === null && deliveries.some((delivery) => delivery.status === 'pending' || delivery.status === 'retrying')) {
    lines.push(chalk.dim('  (--wait waits for their outcome; sandbox webhook deliveries shows it later)'))
  }
  return lines
}

/**
 * One line per delivery that others wait behind (LOG newest first, as the API gives it): after an
 * outage, a receiver back up gets nothing until that one's next attempt, which may be minutes away.
 */
export function formatQueueHints(log: readonly DeliveryEntry[]): string[] {
  const waiting = new Map<DeliveryEntry, number>()
  for (const delivery of log) {
    const blocker = findBlocker(delivery, log)
    if (blocker) waiting.set(blocker, (waiting.get(blocker) ?? 0) + 1)
  }
  return [...waiting].reverse().map(([blocker, count]) => {
    const next = blocker.next_attempt_at ? `, next attempt at ${formatClock(blocker.next_attempt_at)}` : ''
    const pending = count === 1 ? '1 pending delivery waits' : `${count} pending deliveries wait`
    return chalk.dim(`${pending} behind ${show(blocker.id)} (retrying${next}), as deliveries to one receiver go in event order; sandbox webhook retry ${show(blocker.id)} sends it now, and they follow`)
  })
}

/** The key's endpoint on one line (URL, state, events, secret preview), or how to register one. */
export function formatEndpoint(endpoint: WebhookAnswer['endpoint']): string {
  if (!endpoint) return chalk.dim('no endpoint (POST /api/sandbox/webhooks registers one); deliveries to serve\'s --webhook-forward-to URL show here too')
  // Every field as the answer has it: the server at --base-url may be any server, not this one.
  const events = endpoint.events.length === EVENT_TYPES.length ? 'every event' : show(endpoint.events.join(', '))
  return `endpoint ${show(endpoint.url)} (${endpoint.enabled ? 'enabled' : chalk.yellow('disabled')}; ${events}; secret ${show(endpoint.secretPreview)})`
}
