import { STATUS_CODES } from 'node:http'
import type { H3Event } from 'h3'
import type { RouteAnswer } from './route-types.js'

/**
 * Answers through h3's response fields and a string body: much cheaper than building a web
 * Response, whose body h3 would have to stream back out.
 */
export function sendJson(event: H3Event, requestId: string, answer: RouteAnswer, headers: Record<string, string>): string {
  event.res.status = answer.status
  // h3 leaves the reason phrase empty ("HTTP/1.1 200 "): clients that show or log it (curl -i,
  // fetch's statusText, Python's raise_for_status) would see none where an API server sends one.
  event.res.statusText = STATUS_CODES[answer.status] ?? ''
  const target = event.res.headers
  if (answer.text !== undefined) {
    for (const name in answer.headers) target.set(name, answer.headers[name]!)
    return answer.text
  }
  target.set('content-type', 'application/json; charset=utf-8')
  for (const name in headers) target.set(name, headers[name]!)
  if (answer.bodyFields !== undefined) return `{"request_id":"${requestId}"${answer.bodyFields === '' ? '' : `,${answer.bodyFields}`}}`
  const inner = answer.bodyJson ?? JSON.stringify(answer.body ?? {})
  // request_id goes first; ids are [a-z0-9_] so need no escaping.
  return `{"request_id":"${requestId}"${inner.length > 2 ? `,${inner.slice(1)}` : '}'}`
}
