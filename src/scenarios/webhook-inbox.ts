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
  /** Where deliveries are expected: the public URL when one was given, else `localUrl`. */
  url: string
  /** Where the receiver listens on this machine (`http://127.0.0.1:PORT`). */
  localUrl: string
  /** The public URL that reaches the receiver (a tunnel), when one was given. */
  publicUrl?: string
  /**
   * The next delivery to `path` not taken yet, waiting up to `timeoutMs`; null on time-out. An
   * abort of `signal` ends the wait at once, rejecting with its reason.
   */
  next(path: string, timeoutMs: number, signal?: AbortSignal): Promise<ReceivedDelivery | null>
  close(): Promise<void>
}

/** Options of startWebhookInbox. */
export interface WebhookInboxOptions {
  /** The port on 127.0.0.1; 0 (the default) takes any free one. */
  port?: number | undefined
  /** The public URL (without a trailing slash) a tunnel forwards to the receiver. */
  publicUrl?: string | undefined
}

/**
 * The queue a delivery's path belongs to: its last `/hooks/<id>`, the per-scenario path the
 * runner registers. A tunnel mapping `/prefix/*` may keep the prefix or strip it, and either way
 * the delivery reaches the scenario that waits for it.
 */
function toQueuePath(path: string): string {
  const bare = path.split('?')[0]!
  return /\/hooks\/[^/]+$/.exec(bare)?.[0] ?? bare
}

/** Starts the receiver (the `webhook listen` one) on a loopback port; it answers 200. */
export async function startWebhookInbox(options: WebhookInboxOptions = {}): Promise<WebhookInbox> {
  const queues = new Map<string, ReceivedDelivery[]>()
  const waiters = new Map<string, () => void>()
  const listener = await startWebhookListener({
    port: options.port ?? 0,
    onDelivery(delivery) {
      const path = toQueuePath(delivery.path)
      queues.set(path, [...(queues.get(path) ?? []), { headers: delivery.headers, rawBody: delivery.body, receivedAt: Date.parse(delivery.at) }])
      waiters.get(path)?.()
    },
  })
  return {
    url: options.publicUrl ?? listener.url,
    localUrl: listener.url,
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    async next(path, timeoutMs, signal) {
      path = toQueuePath(path)
      signal?.throwIfAborted()
      // The monotonic clock: a wall clock stepped meanwhile would stretch or cut the wait.
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const queue = queues.get(path)
        if (queue && queue.length > 0) return queue.shift()!
        const left = deadline - performance.now()
        if (left <= 0) return null
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            clearTimeout(timer)
            reject(signal!.reason)
          }
          const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort)
            resolve()
          }, left)
          signal?.addEventListener('abort', onAbort, { once: true })
          waiters.set(path, () => {
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve()
          })
        }).finally(() => waiters.delete(path))
      }
    },
    close: () => listener.close(),
  }
}
