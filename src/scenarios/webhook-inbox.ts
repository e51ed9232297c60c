import type { IncomingHttpHeaders } from 'node:http'
import { startWebhookListener } from '../webhook-tools/webhook-listener.js'

/** One delivery the runner's receiver got. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders
  rawBody: string
  receivedAt: number
}

/** Receives webhook deliveries on 127.0.0.1 for `wait_for_webhook` steps, one queue per path. */
export interface WebhookInbox {
  url: string
  /** The next delivery to `path` not taken yet, waiting up to `timeoutMs`; null on time-out. */
  next(path: string, timeoutMs: number): Promise<ReceivedDelivery | null>
  close(): Promise<void>
}

/** Starts the receiver (the `webhook listen` one) on a free loopback port; it answers 200. */
export async function startWebhookInbox(): Promise<WebhookInbox> {
  const queues = new Map<string, ReceivedDelivery[]>()
  const waiters = new Map<string, () => void>()
  const listener = await startWebhookListener({
    port: 0,
    onDelivery(delivery) {
      const path = delivery.path.split('?')[0]!
      queues.set(path, [...(queues.get(path) ?? []), { headers: delivery.headers, rawBody: delivery.body, receivedAt: Date.parse(delivery.at) }])
      waiters.get(path)?.()
    },
  })
  return {
    url: listener.url,
    async next(path, timeoutMs) {
      // The monotonic clock: a wall clock stepped meanwhile would stretch or cut the wait.
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const queue = queues.get(path)
        if (queue && queue.length > 0) return queue.shift()!
        const left = deadline - performance.now()
        if (left <= 0) return null
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.set(path, () => {
            clearTimeout(timer)
            resolve()
          })
        })
        waiters.delete(path)
      }
    },
    close: () => listener.close(),
  }
}
