import { createServer, type Server } from 'node:net'
import { H3 } from 'h3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'

const open: Array<SandboxListener | Server> = []

afterEach(async () => {
  for (const item of open.splice(0)) {
    if ('address' in item) await new Promise((resolve) => item.close(resolve))
    else await item.close()
  }
})

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Requests the slow route is handling now, and when it last answered. */
const slowRoute = { handling: 0, answeredAt: 0 }

/** An app with a route that answers after `?ms=` milliseconds. */
function createSlowApp() {
  return new H3().get('/slow', async (event) => {
    slowRoute.handling++
    try {
      await wait(Number(new URL(event.req.url).searchParams.get('ms') ?? 0))
    } finally {
      slowRoute.handling--
      slowRoute.answeredAt = performance.now()
    }
    return { done: true }
  })
}

async function start(closeTimeoutMs?: number): Promise<SandboxListener> {
  const listener = await listenSandbox({ app: createSlowApp() }, { port: 0, host: '127.0.0.1', closeTimeoutMs })
  open.push(listener)
  return listener
}

describe('listenSandbox', () => {
  it('serves on a free port when asked for port 0', async () => {
    const listener = await start()
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`)
    expect(await (await fetch(`${listener.url}/slow`)).json()).toEqual({ done: true })
  })

  it('refuses a busy port with code EADDRINUSE instead of moving to another one', async () => {
    const blocker = createServer()
    open.push(blocker)
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    const attempt = listenSandbox({ app: createSlowApp() }, { port, host: '127.0.0.1' })
    await expect(attempt).rejects.toMatchObject({ code: 'EADDRINUSE', message: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`) })
  })

  it('lets an in-flight request finish on close, without waiting for idle keep-alive connections', async () => {
    const listener = await start()
    // An idle keep-alive connection from an earlier request must not hold close() up.
    await (await fetch(`${listener.url}/slow`)).text()
    const inFlight = fetch(`${listener.url}/slow?ms=300`)
    // Polled, not a fixed 50 ms: on a busy machine the request reached the route later, and
    // less than the 200 ms the test asked of close() was left of its 300.
    await vi.waitFor(() => expect(slowRoute.handling).toBe(1), { timeout: 10_000, interval: 5 })
    const started = performance.now()
    await listener.close()
    const closedAt = performance.now()
    expect(await (await inFlight).json()).toEqual({ done: true })
    expect(closedAt).toBeGreaterThanOrEqual(slowRoute.answeredAt)
    expect(closedAt - started).toBeLessThan(2000)
    await expect(fetch(`${listener.url}/slow`)).rejects.toThrow()
  })

  it('cuts requests still running when the close cap runs out', async () => {
    const listener = await start(200)
    const hung = fetch(`${listener.url}/slow?ms=5000`).then(() => 'answered', () => 'cut')
    await wait(50)
    await listener.close()
    // Waited for, it would have answered after its 5 s.
    expect(await hung).toBe('cut')
  })
})
