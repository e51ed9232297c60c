import type { SessionDoc } from '../server/session-doc.js'
import { findHead } from './deliveries.js'
import { findDueRun } from './delivery-spill.js'
import { DELIVERY_TARGETS, type Delivery } from './types.js'

/**
 * A session's next work: a spilled batch whose turn has come, or the heads of its queues. A
 * server started without a forward target (`forwarding` false) leaves the forward queue as it is
 * (its marker too), so a start without `--webhook-forward-to` spends none of its attempts and the
 * next one with it resumes them.
 */
export function findWork(doc: SessionDoc, forwarding: boolean) {
  const targets = DELIVERY_TARGETS.filter((target) => (target === 'forward' ? forwarding : doc.webhook.endpoint?.enabled))
  const dueRun = targets.map((target) => findDueRun(doc.webhook, target)).find((run) => run !== undefined)
  const heads = targets
    .map((target) => findHead(doc.webhook, target))
    .filter((delivery): delivery is Delivery => delivery !== undefined)
  return { dueRun, heads }
}
