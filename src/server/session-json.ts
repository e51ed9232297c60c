import type { SessionDoc } from './session-store.js'
import { appendJsonFields, stringifyOnce } from '../storage/json-memo.js'
import { stringifyEvent } from '../webhooks/event-json.js'
import type { Delivery } from '../webhooks/types.js'

/**
 * Session documents are immutable values whose lists (loans, applications, repayments,
 * idempotency records with their stored answers, webhook deliveries) mostly keep the same element
 * objects from one save to the next, so each element is turned into text once (stringifyOnce)
 * instead of on every save of its session.
 */
function stringifyList<T extends object>(items: readonly T[], stringify: (item: T) => string = JSON.stringify): string {
  // Concatenation rather than join: V8 then links the element texts instead of copying them, so a
  // save costs the number of elements, not the size of the document (the copy is made once, by
  // whoever finally reads the text).
  let text = '['
  for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ',') + stringifyOnce(items[i]!, stringify)
  return `${text}]`
}

/** A delivery's event is shared by its other versions and targets: its text is made once. */
function stringifyDelivery(delivery: Delivery): string {
  if (!delivery.event) return JSON.stringify(delivery)
  const { event, ...rest } = delivery
  return appendJsonFields(JSON.stringify(rest), `"event":${stringifyEvent(event)}`)
}

/** The stored text of a session document: equal to JSON.stringify of it, up to key order. */
export function stringifySessionDoc(doc: SessionDoc): string {
  const { book, idempotency, webhook, ...rest } = doc
  if (!webhook || !Array.isArray(idempotency) || !book || !Array.isArray(book.loans) || !Array.isArray(book.applications) || !Array.isArray(book.repayments)) {
    return JSON.stringify(doc)
  }
  const { loans, applications, repayments, ...bookRest } = book
  const bookJson = appendJsonFields(JSON.stringify(bookRest), `"loans":${stringifyList(loans)},"applications":${stringifyList(applications)},"repayments":${stringifyList(repayments)}`)
  const { deliveries, ...webhookRest } = webhook
  const webhookJson = appendJsonFields(JSON.stringify(webhookRest), `"deliveries":${stringifyList(deliveries, stringifyDelivery)}`)
  return appendJsonFields(JSON.stringify(rest), `"book":${bookJson},"webhook":${webhookJson},"idempotency":${stringifyList(idempotency)}`)
}
