import { createServer } from 'node:net'

/** A port free on 127.0.0.1 a moment ago (listened on, then closed), for what needs a fixed port. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}
