/**
 * Runs async work strictly one after another per key, in arrival order, while different keys run
 * concurrently. Idle keys hold no memory.
 */
export function createKeyedMutex() {
  const tails = new Map<string, Promise<unknown>>()

  function run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve()
    const result = previous.then(fn, fn)
    // The queue continues whether fn resolves or throws.
    const tail = result.then(() => {}, () => {})
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return result
  }

  /** Resolves once every queue has drained (used by graceful shutdown). */
  async function idle(): Promise<void> {
    while (tails.size > 0) await Promise.all([...tails.values()])
  }

  return { run, idle, get activeKeys() { return tails.size } }
}

/** A mutex made by createKeyedMutex. */
export type KeyedMutex = ReturnType<typeof createKeyedMutex>
