import { createServer, type AddressInfo, type Socket } from 'node:net'

/** A server on 127.0.0.1 that reads requests and never answers. */
export interface SilentServer {
  url: string
  /** Connections that sent a request. */
  requests(): number
  /** Of those, the ones the client closed (a cancel, a timeout). */
  dropped(): number
  close(): Promise<void>
}

/** Starts a SilentServer on a free loopback port: what a client meets when a server hangs. */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>()
  let requests = 0
  let dropped = 0
  const server = createServer((socket) => {
    sockets.add(socket)
    let asked = false
    socket.on('error', () => {})
    socket.on('data', () => {
      if (!asked) requests++
      asked = true
    })
    socket.on('close', () => {
      if (asked) dropped++
      sockets.delete(socket)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    dropped: () => dropped,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}
