/** A min-heap of items by the time they are due (ms since epoch). */
export interface DueQueue<T extends { next: number }> {
  push(item: T): void
  /** The earliest due time, or undefined when empty. */
  peekNext(): number | undefined
  /** Removes and returns the items due at or before `now`, earliest first, at most `limit`. */
  popDue(now: number, limit?: number): T[]
  readonly size: number
}

/**
 * Creates a due queue: one heap for every parked retry of the server, so that thousands of keys
 * waiting on a dead receiver cost one timer, not one each.
 */
export function createDueQueue<T extends { next: number }>(): DueQueue<T> {
  const heap: T[] = []

  function up(index: number): void {
    const item = heap[index]!
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (heap[parent]!.next <= item.next) break
      heap[index] = heap[parent]!
      index = parent
    }
    heap[index] = item
  }

  function down(index: number): void {
    const item = heap[index]!
    for (;;) {
      let child = 2 * index + 1
      if (child >= heap.length) break
      if (child + 1 < heap.length && heap[child + 1]!.next < heap[child]!.next) child++
      if (heap[child]!.next >= item.next) break
      heap[index] = heap[child]!
      index = child
    }
    heap[index] = item
  }

  function pop(): T {
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      down(0)
    }
    return top
  }

  return {
    push(item) {
      heap.push(item)
      up(heap.length - 1)
    },
    peekNext: () => heap[0]?.next,
    popDue(now, limit = Infinity) {
      const due: T[] = []
      while (heap.length > 0 && heap[0]!.next <= now && due.length < limit) due.push(pop())
      return due
    },
    get size() {
      return heap.length
    },
  }
}
