import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

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

/** Starts the receiver on a free loopback port; it answers 200 to every POST. */
export async function startWebhookInbox(): Promise<WebhookInbox> {
  const queues = new Map<string, ReceivedDelivery[]>()
  const waiters = new Map<string, () => void>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!
      const queue = queues.get(path) ?? []
      queue.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() })
      queues.set(path, queue)
      waiters.get(path)?.()
      res.writeHead(req.method === 'POST' ? 200 : 405, { 'content-type': 'application/json' }).end('{"received":true}')
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    async next(path, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const queue = queues.get(path)
        if (queue && queue.length > 0) return queue.shift()!
        const left = deadline - Date.now()
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
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
