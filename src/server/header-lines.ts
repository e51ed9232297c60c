import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'

/**
 * How many times the request carried the header `name` as its own line. A header sent twice
 * reaches `event.req.headers` joined with ", ", which reads as one value; only the connection's
 * raw lines tell them apart. A request with no connection (`sandbox.fetch`) has only the joined
 * value: it counts as one line when present.
 */
export function countHeaderLines(event: H3Event, name: string): number {
  const raw = (event.runtime?.node?.req as IncomingMessage | undefined)?.rawHeaders
  if (!raw) return event.req.headers.has(name) ? 1 : 0
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) count++
  return count
}
