/** The end of each connection's queue of requests: the promise the last one queued resolves. */
const tails = new WeakMap<object, Promise<void>>()

/**
 * Waits until the requests received before this one on SOCKET have been answered, and returns the
 * release that lets the next one go. A client that pipelines (sends requests back to back on one
 * connection, RFC 9112 9.3.2) gets its answers in order from Node, but Node hands the requests to
 * the handler at once: a GET behind a POST answered the state from before the POST, and a retry
 * behind its first attempt 409 IDEMPOTENCY_KEY_IN_PROGRESS. No socket (a fetch handler): no queue.
 */
export async function takeConnectionTurn(socket: object | undefined): Promise<() => void> {
  if (!socket) return () => {}
  const before = tails.get(socket)
  let release!: () => void
  const done = new Promise<void>((resolve) => { release = resolve })
  const tail = before ? before.then(() => done) : done
  tails.set(socket, tail)
  if (before) await before
  return () => {
    release()
    if (tails.get(socket) === tail) tails.delete(socket)
  }
}
