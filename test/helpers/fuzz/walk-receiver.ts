import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the walk's receiver got: the path, and the body as JSON. */
export interface WalkDelivery { path: string; event: unknown }

/**
 * A webhook receiver on 127.0.0.1: `/fwd` takes the forwarded events of every key, `/ep/<key>/ok`
 * and `/ep/<key>/fail` (answers 500) are the keys' own endpoints.
 */
export async function startWalkReceiver(): Promise<{ base: string; got: WalkDelivery[]; close(): Promise<void> }> {
  const got: WalkDelivery[] = []
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
      got.push({ path: req.url ?? '', event })
      res.statusCode = req.url?.includes('/fail') ? 500 : 200
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
