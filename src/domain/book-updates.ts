import { flowConflict } from '../errors/sandbox-error.js'
import { roundAsset } from './money.js'
import type { Asset, Balances } from './types.js'

/**
 * Immutable update helpers for the loan book. Every step builds new arrays and objects with
 * these instead of mutating, so a step that throws halfway leaves the caller's book untouched.
 */

/**
 * Returns `items` with the element whose `key` matches `next` replaced by `next`, in the same
 * position, after `check` (which throws) allowed the change: stored answers refer to final
 * records and to loan histories by position (final-records.ts).
 */
export function replaceWhere<T, K extends keyof T>(items: readonly T[], key: K, next: T, check: (item: T, next: T) => void): T[] {
  return items.map((item) => {
    if (item[key] !== next[key]) return item
    check(item, next)
    return next
  })
}

/** Returns a new wallet with `amount` of `asset` taken out; 409 INSUFFICIENT_BALANCE when it holds less. */
export function debitWallet(wallet: Balances, asset: Asset, amount: number): Balances {
  const available = wallet[asset]
  if (available < amount) {
    throw flowConflict('INSUFFICIENT_BALANCE', `The simulator wallet holds ${available} ${asset}; ${amount} ${asset} is needed.`, {
      asset,
      required: amount,
      available,
    })
  }
  return { ...wallet, [asset]: roundAsset(asset, available - amount) }
}

/** Throws 409 INSUFFICIENT_BALANCE when the wallet holds less than `amount` of `asset`, without changing anything. */
export function assertWalletHolds(wallet: Balances, asset: Asset, amount: number): void {
  debitWallet(wallet, asset, amount)
}

/** Returns a new wallet with `amount` of `asset` added. */
export function creditWallet(wallet: Balances, asset: Asset, amount: number): Balances {
  return { ...wallet, [asset]: roundAsset(asset, wallet[asset] + amount) }
}
