import { z } from 'zod'
import { hasAtMostDecimals } from '../domain/money.js'

/**
 * Field builders shared by the request schemas, so one field means the same thing (type,
 * range, description) on every endpoint.
 */

/** A positive amount with at most `decimals` decimal places. */
export function positiveAmount(decimals: number, description: string) {
  return z
    .number()
    .positive()
    .refine((value) => hasAtMostDecimals(value, decimals), { message: `must have at most ${decimals} decimal places` })
    .describe(description)
}

/** A BTC amount (satoshi precision). */
export function btcAmount(description: string) {
  return positiveAmount(8, description)
}

/** A USDT amount (cent precision). */
export function usdtAmount(description: string) {
  return positiveAmount(2, description)
}

/** A short opaque identifier string (partner ids, references, resource ids). */
export function identifier(description: string) {
  return z.string().min(1).max(128).describe(description)
}

/** `tx_hash` of a simulated transfer. */
export const txHashField = z.string().min(1).max(256).describe('Hash of the simulated transfer; any non-empty string.')

/** `confirmations` of a simulated transfer. */
export const confirmationsField = z
  .number()
  .int()
  .min(0)
  .describe('Confirmations of the simulated transfer; must reach the wallet\'s requiredConfirmations.')

/** `loan_currency`: checked against the config's `currencies` by the domain. */
export const loanCurrencyField = z.string().min(1).max(16)

/** Partner grouping fields of a new loan. */
export const partnerClientFields = {
  external_client_id: identifier("Partner's client identifier, used to group deals.").optional(),
  client_reference: identifier('Partner reference, used to group deals.').optional(),
}
