import type { SessionDoc } from './session-store.js'
import { stringifyEvent } from '../webhooks/event-json.js'
import type { Delivery } from '../webhooks/types.js'

/**
 * JSON text of list elements already serialized. Session documents are immutable values whose
 * lists (loans, applications, repayments, idempotency records with their stored answers, webhook
 * deliveries) mostly keep the same element objects from one save to the next, so each element is
 * turned into text once instead of on every save of its session.
 */
const elementJson = new WeakMap<object, string>()

function stringifyList<T extends object>(items: readonly T[], stringify: (item: T) => string = JSON.stringify): string {
  const parts = new Array<string>(items.length)
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    let json = elementJson.get(item)
    if (json === undefined) elementJson.set(item, (json = stringify(item)))
    parts[i] = json
  }
  return `[${parts.join(',')}]`
}

/** A delivery's event is shared by its other versions and targets: its text is made once. */
function stringifyDelivery(delivery: Delivery): string {
  if (!delivery.event) return JSON.stringify(delivery)
  const { event, ...rest } = delivery
  return withFields(JSON.stringify(rest), `"event":${stringifyEvent(event)}`)
}

/** Adds `fields` (already JSON, `"name":value,...`) to the JSON text of an object. */
function withFields(objectJson: string, fields: string): string {
  return objectJson === '{}' ? `{${fields}}` : `${objectJson.slice(0, -1)},${fields}}`
}

/** The stored text of a session document: equal to JSON.stringify of it, up to key order. */
export function stringifySessionDoc(doc: SessionDoc): string {
  const { book, idempotency, webhook, ...rest } = doc
  if (!webhook || !Array.isArray(idempotency) || !book || !Array.isArray(book.loans) || !Array.isArray(book.applications) || !Array.isArray(book.repayments)) {
    return JSON.stringify(doc)
  }
  const { loans, applications, repayments, ...bookRest } = book
  const bookJson = withFields(JSON.stringify(bookRest), `"loans":${stringifyList(loans)},"applications":${stringifyList(applications)},"repayments":${stringifyList(repayments)}`)
  const { deliveries, ...webhookRest } = webhook
  const webhookJson = withFields(JSON.stringify(webhookRest), `"deliveries":${stringifyList(deliveries, stringifyDelivery)}`)
  return withFields(JSON.stringify(rest), `"book":${bookJson},"webhook":${webhookJson},"idempotency":${stringifyList(idempotency)}`)
}
