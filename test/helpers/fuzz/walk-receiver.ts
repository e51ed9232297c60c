import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkDeliveryAgainstContract } from '../contract.js'

/** What the walk's receiver got: the path, the body as JSON, and the status it answered. */
export interface WalkDelivery { path: string; event: unknown; status: number }

/** The walk's receiver: what it got, and which keys' `/recover` endpoints are down now. */
export interface WalkReceiver {
  base: string
  got: WalkDelivery[]
  /** Keys whose `/ep/<key>/recover` answers 500 until taken out again. */
  down: Set<number>
  /** How deliveries broke the OpenAPI document's webhook entries (checkDeliveryAgainstContract). */
  contractProblems: string[]
  close(): Promise<void>
}

/**
 * A webhook receiver on 127.0.0.1: `/fwd` takes the forwarded events of every key, `/ep/<key>/ok`,
 * `/ep/<key>/fail` (answers 500) and `/ep/<key>/recover` (500 while the key is in `down`) are the
 * keys' own endpoints.
 */
export async function startWalkReceiver(): Promise<WalkReceiver> {
  const got: WalkDelivery[] = []
  const down = new Set<number>()
  const contractProblems: string[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      let event: unknown
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        event = null
      }
      const url = req.url ?? ''
      const recovering = /^\/ep\/(\d+)\/recover$/.exec(url)
      const failing = url.includes('/fail') || (recovering !== null && down.has(Number(recovering[1])))
      res.statusCode = failing ? 500 : 200
      got.push({ path: url, event, status: res.statusCode })
      res.end('ok')
      contractProblems.push(...checkDeliveryAgainstContract({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    down,
    contractProblems,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
