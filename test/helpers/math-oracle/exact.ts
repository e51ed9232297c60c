/**
 * Exact decimal arithmetic for the loan-math oracle: every figure is a BigInt of cents,
 * satoshis or hundredths of a percent, and every config figure a fraction read from its decimal
 * text, so no expected value shares the server's float rounding.
 */

/** A non-negative fraction n / d. */
export interface Fraction {
  n: bigint
  d: bigint
}

/** The exact value of the decimal text JavaScript prints for `value` (1.5, 1e-8, 2.5e+21). */
export function toFraction(value: number): Fraction {
  const [mantissa, exponentText] = String(value).toLowerCase().split('e') as [string, string | undefined]
  const [whole, fraction = ''] = mantissa.split('.') as [string, string | undefined]
  let n = BigInt(`${whole}${fraction}`)
  let d = 10n ** BigInt(fraction.length)
  const exponent = Number(exponentText ?? 0)
  if (exponent >= 0) n *= 10n ** BigInt(exponent)
  else d *= 10n ** BigInt(-exponent)
  return { n, d }
}

/** `value` in units of 10^-decimals, or null when it is not a whole number of them. */
export function toUnits(value: number, decimals: number): bigint | null {
  const { n, d } = toFraction(value)
  const scaled = n * 10n ** BigInt(decimals)
  return scaled % d === 0n ? scaled / d : null
}

/** The number a partner's client sends for `units` at `decimals` (the double nearest that decimal). */
export function fromUnits(units: bigint, decimals: number): number {
  return Number(units) / 10 ** decimals
}

/** n / d rounded half up (n, d >= 0): the rounding the README's "rounded to cents" is read as. */
export function divideHalfUp(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d)
}

/** n / d rounded down (n, d >= 0). */
export function divideDown(n: bigint, d: bigint): bigint {
  return n / d
}

/** n / d rounded up (n, d >= 0). */
export function divideUp(n: bigint, d: bigint): bigint {
  return (n + d - 1n) / d
}

/** The larger of two BigInts. */
export function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}
