/**
 * Rounding for the three kinds of figures the sandbox shows: USD/USDT amounts (cents), BTC
 * amounts (satoshis) and LTV percentages. Every stored figure goes through one of these, so
 * float noise such as 0.1 + 0.2 never reaches a balance or a response.
 */

/** Decimal places of each kind of figure. */
export const Decimals = { USD: 2, BTC: 8, PERCENT: 2 } as const

/**
 * Scales `value` by 10^decimals and drops float noise past 15 significant digits, so that
 * 1.005 * 100 is seen as 100.5 (not 100.49999999999999) before rounding.
 */
function scaleClean(value: number, decimals: number): number {
  return Number((value * 10 ** decimals).toPrecision(15))
}

/** Rounds half away from zero to `decimals` places. */
export function roundTo(value: number, decimals: number): number {
  const scaled = scaleClean(Math.abs(value), decimals)
  // Past ~1.8e306 the scaling overflows to Infinity; a number that large has no decimals to round
  // (and must stay itself, or a refusal would report it as Infinity, and as null in JSON).
  if (!Number.isFinite(scaled)) return value
  const rounded = Math.round(scaled) / 10 ** decimals
  return value < 0 ? -rounded : rounded
}

/** Rounds a USD/USDT amount to cents. */
export function roundUsd(value: number): number {
  return roundTo(value, Decimals.USD)
}

/** Rounds a BTC amount to satoshis. */
export function roundBtc(value: number): number {
  return roundTo(value, Decimals.BTC)
}

/** Rounds an LTV percentage to 2 decimals. */
export function roundPercent(value: number): number {
  return roundTo(value, Decimals.PERCENT)
}

/** Rounds an amount of `asset` to that asset's precision. */
export function roundAsset(asset: 'BTC' | 'USDT', value: number): number {
  return asset === 'BTC' ? roundBtc(value) : roundUsd(value)
}

/** Decimal places an amount of `asset` may carry. */
export function assetDecimals(asset: 'BTC' | 'USDT'): number {
  return asset === 'BTC' ? Decimals.BTC : Decimals.USD
}

/**
 * True when `value` has no more than `decimals` decimal places, ignoring float noise (a client
 * that sends 19999.99 + 199.99 = 20199.980000000003 still means cents).
 */
export function hasAtMostDecimals(value: number, decimals: number): boolean {
  // A whole number has none, however large: scaled, 1e308 would overflow to Infinity and be
  // refused as having too many decimals rather than as over its limit.
  if (Number.isInteger(value)) return true
  return Number.isInteger(scaleClean(value, decimals))
}

/** A non-negative fraction n / d of BigInts. */
export interface ExactFraction {
  n: bigint
  d: bigint
}

/**
 * The exact value of the decimal text JavaScript prints for `value` (95000.01 is 9500001 / 100,
 * 1e-7 is 1 / 10^7), for the comparisons where a double's last bits would decide. `value` must
 * be finite and not negative.
 */
export function toExactFraction(value: number): ExactFraction {
  const [mantissa, exponentText] = String(value).split('e') as [string, string | undefined]
  const [whole, fraction = ''] = mantissa.split('.') as [string, string | undefined]
  const exponent = Number(exponentText ?? 0)
  const n = BigInt(`${whole}${fraction}`) * 10n ** BigInt(Math.max(0, exponent))
  return { n, d: 10n ** BigInt(fraction.length + Math.max(0, -exponent)) }
}

/** `value` (already rounded to `decimals`) as a whole number of its smallest units: cents, satoshis. */
export function toUnits(value: number, decimals: number): bigint {
  return BigInt(Math.round(value * 10 ** decimals))
}
