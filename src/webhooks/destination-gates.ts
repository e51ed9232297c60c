/**
 * Deliveries in flight to one destination (scheme, host and port) at most. With
 * `--webhook-forward-to`, every key's events go to one partner dev server: when it came back after
 * an outage, each waiting key's delivery opened a connection of its own at once (measured with
 * 5,000 keys: 1,833 connections open at the receiver, 345 deliveries timed out there and were sent
 * twice, API answers meanwhile up to 5.6 s). A dev server works through a handful of requests at
 * a time anyway: 16 kept connections delivered that backlog in 6-11 s, where thousands of new ones
 * took 12-30 s (README, "A receiver back after an outage"), and 16 stay far below the 256
 * descriptors a macOS terminal gives a process.
 */
export const MAX_IN_FLIGHT_PER_DESTINATION = 16

/**
 * Keys whose receiver is back woken at a time per destination (wake-pacer.ts): twice the places
 * in flight, as a woken key also reads and writes its document between sends.
 */
export const KEYS_WOKEN_PER_DESTINATION = 2 * MAX_IN_FLIGHT_PER_DESTINATION

interface Gate {
  active: number
  /** Sends waiting for a place, oldest first: told true when they have one, false on close. */
  waiting: Array<(entered: boolean) => void>
}

/** Places for deliveries in flight, per destination, handed out first come, first served. */
export interface DestinationGates {
  /** Takes a place at once if one is free and nobody waits: true if taken. */
  tryEnter(key: string): boolean
  /** Resolves true once a place is taken (after the sends that waited before), false if closed first. */
  enter(key: string): Promise<boolean>
  /** Gives a place back, to the longest waiting send if any. */
  leave(key: string): void
  /** Sends in flight or waiting for the destination. */
  load(key: string): number
  /** Hands out no more places: sends waiting for one, and any later, are told false. */
  close(): void
}

/** Creates gates that let `limit` sends per destination in flight at once. */
export function createDestinationGates(limit = MAX_IN_FLIGHT_PER_DESTINATION): DestinationGates {
  const gates = new Map<string, Gate>()
  let closed = false

  function gateOf(key: string): Gate {
    let gate = gates.get(key)
    if (!gate) gates.set(key, (gate = { active: 0, waiting: [] }))
    return gate
  }

  return {
    tryEnter(key) {
      if (closed) return false
      const gate = gateOf(key)
      if (gate.active >= limit || gate.waiting.length > 0) return false
      gate.active++
      return true
    },
    enter(key) {
      if (closed) return Promise.resolve(false)
      if (this.tryEnter(key)) return Promise.resolve(true)
      return new Promise((resolve) => gateOf(key).waiting.push(resolve))
    },
    leave(key) {
      const gate = gates.get(key)
      if (!gate) return
      const next = gate.waiting.shift()
      // The place passes to the next send as it is: active stays the same.
      if (next) return next(true)
      gate.active--
      // A destination nobody sends to any more (an old endpoint) keeps no entry.
      if (gate.active === 0) gates.delete(key)
    },
    load(key) {
      const gate = gates.get(key)
      return gate ? gate.active + gate.waiting.length : 0
    },
    close() {
      closed = true
      for (const gate of gates.values()) {
        const waiting = gate.waiting
        gate.waiting = []
        for (const resolve of waiting) resolve(false)
      }
    },
  }
}
