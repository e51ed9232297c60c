import { describe, expect, it } from 'vitest'
import { createDestinationGates } from '../../src/webhooks/destination-gates.js'

describe('destination gates', () => {
  it('lets `limit` sends in per destination and hands freed places out first come, first served', async () => {
    const gates = createDestinationGates(2)
    expect(gates.tryEnter('a')).toBe(true)
    expect(gates.tryEnter('a')).toBe(true)
    expect(gates.tryEnter('a')).toBe(false)
    // Another destination has places of its own.
    expect(gates.tryEnter('b')).toBe(true)
    const order: number[] = []
    const waiting = [1, 2, 3].map((n) => gates.enter('a').then(() => order.push(n)))
    expect(gates.load('a')).toBe(5)
    gates.leave('a')
    gates.leave('a')
    await Promise.resolve()
    expect(order).toEqual([1, 2])
    // A waiter queued is served before a newcomer that finds a place just freed.
    gates.leave('a')
    expect(gates.tryEnter('a')).toBe(false)
    await Promise.all(waiting)
    expect(order).toEqual([1, 2, 3])
    gates.leave('a')
    gates.leave('a')
    expect(gates.load('a')).toBe(0)
  })
  it('tells sends waiting for a place, and later ones, that they get none once closed', async () => {
    const gates = createDestinationGates(1)
    expect(gates.tryEnter('a')).toBe(true)
    const waiting = gates.enter('a')
    gates.close()
    expect(await waiting).toBe(false)
    expect(await gates.enter('b')).toBe(false)
    expect(gates.tryEnter('b')).toBe(false)
  })
})
