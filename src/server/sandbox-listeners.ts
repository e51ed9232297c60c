/**
 * The listeners listenSandbox opened for each sandbox app, so that sandbox.close() closes them
 * too: a listener left open kept serving a closed sandbox, writing to a data dir whose lock it had
 * given back, and kept the process alive.
 */
interface AppListeners {
  closed: boolean
  /** listenSandbox calls not finished yet: close() waits for them, then closes what they opened. */
  opening: Set<Promise<unknown>>
  open: Set<() => Promise<void>>
}

const listenersByApp = new WeakMap<object, AppListeners>()

function listenersOf(app: object): AppListeners {
  let entry = listenersByApp.get(app)
  if (!entry) {
    entry = { closed: false, opening: new Set(), open: new Set() }
    listenersByApp.set(app, entry)
  }
  return entry
}

/** Whether close() was called on the sandbox serving APP. */
export function isSandboxClosed(app: object): boolean {
  return listenersByApp.get(app)?.closed ?? false
}

/** The error of a call (listenSandbox, sandbox.fetch) made on a sandbox that close() was called on. */
export function createSandboxClosedError(caller: 'listenSandbox' | 'sandbox.fetch'): Error {
  return new Error(`${caller}: this sandbox is closed (its close() was called); create another with createSandbox()`)
}

/** Counts OPENING (a listenSandbox call) as in progress for APP until it settles. */
export function trackOpening<T>(app: object, opening: Promise<T>): Promise<T> {
  const { opening: pending } = listenersOf(app)
  pending.add(opening)
  const settle = () => { pending.delete(opening) }
  opening.then(settle, settle)
  return opening
}

/** Registers CLOSE (a listener's) to be called by the sandbox's close; returns its removal. */
export function trackListener(app: object, close: () => Promise<void>): () => void {
  const { open } = listenersOf(app)
  open.add(close)
  return () => { open.delete(close) }
}

/** Marks APP's sandbox closed and closes its listeners, those still opening included. */
export async function closeListenersOf(app: object): Promise<void> {
  const entry = listenersOf(app)
  entry.closed = true
  await Promise.allSettled([...entry.opening])
  await Promise.all([...entry.open].map((close) => close()))
}
