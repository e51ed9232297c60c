/**
 * A seeded PRNG and the value generators of the domain property test. Hand-rolled (mulberry32)
 * so the project needs no property-testing dependency and a seed replays the same sequence.
 */

/** A deterministic source of random choices. */
export interface Random {
  /** A float in [0, 1). */
  next(): number
  /** An integer in [min, max]. */
  int(min: number, max: number): number
  /** True with probability `p`. */
  chance(p: number): boolean
  /** One of `items`. */
  pick<T>(items: readonly T[]): T
}

/** mulberry32: 32-bit state, good enough spread for test inputs and fast. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list')
      return items[int(0, items.length - 1)]!
    },
  }
}

/** A random multiple of 10^-decimals in [min, max]. */
function randomUnits(random: Random, min: number, max: number, decimals: number): number {
  const scale = 10 ** decimals
  return random.int(Math.ceil(min * scale), Math.floor(max * scale)) / scale
}

/** Amounts no valid request has, whatever the asset: zero, negatives, extremes, wrong types. */
const HOSTILE = [0, -0, -1, -0.01, 1e308, 5e-324, Number.NaN, Number.POSITIVE_INFINITY, '100', null] as const

/**
 * A USDT amount: usually near `hints` (the debt, the interest due, ... of the state) or in a
 * plausible range in cents, sometimes with too many decimals, float-noise sums, limits or junk.
 */
export function randomUsdt(random: Random, hints: readonly number[]): unknown {
  const roll = random.next()
  if (roll < 0.3 && hints.length > 0) {
    const hint = random.pick(hints)
    return random.pick([hint, hint - 0.01, hint + 0.01, hint / 2, hint * 2, hint + 1e-9])
  }
  if (roll < 0.6) {
    const [min, max] = random.pick([[0.01, 1], [1, 500], [100, 60_000], [1e5, 1.2e6]] as const)
    return randomUnits(random, min, max, 2)
  }
  if (roll < 0.7) return random.next() * random.pick([1, 1000, 50_000])
  if (roll < 0.9) return random.pick([0.01, 0.001, 99.99, 100, 1e6, 1_000_000.01, 0.1 + 0.2, 19_999.99 + 199.99, 100.1 + 0.2, 1234.565, 20_000])
  return random.pick(HOSTILE)
}

/** A BTC amount: near `hints`, whole satoshis in a plausible range, limits, too fine, or junk. */
export function randomBtc(random: Random, hints: readonly number[]): unknown {
  const roll = random.next()
  if (roll < 0.3 && hints.length > 0) {
    const hint = random.pick(hints)
    return random.pick([hint, hint - 1e-8, hint + 1e-8, hint / 2, hint * 2])
  }
  if (roll < 0.6) {
    const [min, max] = random.pick([[1e-8, 1e-4], [0.001, 0.1], [0.1, 2], [2, 120]] as const)
    return randomUnits(random, min, max, 8)
  }
  if (roll < 0.7) return random.next() * random.pick([0.01, 1, 10])
  if (roll < 0.9) return random.pick([1e-8, 1e-9, 0.001, 0.00099999, 100, 100.00000001, 0.1 + 0.2, 0.7 + 0.1, 0.5])
  return random.pick(HOSTILE)
}
