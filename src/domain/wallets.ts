import { hashToHex } from './address-hash.js'
import type { Asset, DomainContext, SandboxWallet } from './types.js'

/** What a sandbox wallet is for; part of the address derivation. */
export type WalletPurpose = 'collateralDeposit' | 'loanPayout' | 'collateralReturn' | 'repayment'

/**
 * Address prefixes that no mainnet uses (BTC mainnet is bc1/1/3, USDT lives at T.../0x...), so
 * a sandbox address can never be mistaken for, or paid to, a real one.
 */
const ADDRESS_FORMAT: Record<Asset, { prefix: string; length: number }> = {
  BTC: { prefix: 'sbtc1q', length: 38 },
  USDT: { prefix: 'sUSDT', length: 34 },
}

/** Derives the deterministic sandbox address of (key seed, owner id, purpose) for `asset`. */
export function deriveSandboxAddress(keySeed: string, asset: Asset, ownerId: string, purpose: WalletPurpose): string {
  const { prefix, length } = ADDRESS_FORMAT[asset]
  return prefix + hashToHex(`${keySeed}\u0000${ownerId}\u0000${purpose}\u0000${asset}`, length)
}

/** Builds a sandbox wallet object (spec 2.3) owned by an application, operation or loan. */
export function createSandboxWallet(ctx: DomainContext, asset: Asset, ownerId: string, purpose: WalletPurpose): SandboxWallet {
  return {
    asset,
    chainCode: 'sandbox',
    address: deriveSandboxAddress(ctx.keySeed, asset, ownerId, purpose),
    requiredConfirmations: ctx.requiredConfirmations[asset],
    isRealWallet: false,
    confirmationMode: 'api_action',
  }
}
