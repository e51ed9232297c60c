import { describe, expect, it } from 'vitest'
import { createSandboxWallet, deriveSandboxAddress } from '../../src/domain/wallets.js'
import { createTestContext } from './domain-helpers.js'

describe('sandbox wallets', () => {
  it('derives the same address from the same inputs', () => {
    expect(deriveSandboxAddress('key_a', 'BTC', 'app_1', 'collateralDeposit')).toBe(deriveSandboxAddress('key_a', 'BTC', 'app_1', 'collateralDeposit'))
  })

  it('derives different addresses when the key, owner or purpose differs', () => {
    const addresses = new Set([
      deriveSandboxAddress('key_a', 'BTC', 'app_1', 'collateralDeposit'),
      deriveSandboxAddress('key_b', 'BTC', 'app_1', 'collateralDeposit'),
      deriveSandboxAddress('key_a', 'BTC', 'app_2', 'collateralDeposit'),
      deriveSandboxAddress('key_a', 'BTC', 'app_1', 'collateralReturn'),
    ])
    expect(addresses.size).toBe(4)
  })

  it('formats addresses so they are never mainnet addresses', () => {
    const btc = deriveSandboxAddress('key_a', 'BTC', 'app_1', 'collateralDeposit')
    const usdt = deriveSandboxAddress('key_a', 'USDT', 'app_1', 'loanPayout')
    expect(btc).toMatch(/^sbtc1q[0-9a-f]{38}$/)
    expect(usdt).toMatch(/^sUSDT[0-9a-f]{34}$/)
    expect(btc).not.toMatch(/^(bc1|1|3)/)
    expect(usdt).not.toMatch(/^(T|0x)/)
  })

  it('builds the wallet object with the confirmations the context requires', () => {
    const ctx = createTestContext()
    expect(createSandboxWallet(ctx, 'USDT', 'rop_1', 'repayment')).toEqual({
      asset: 'USDT',
      chainCode: 'sandbox',
      address: deriveSandboxAddress('key_test', 'USDT', 'rop_1', 'repayment'),
      requiredConfirmations: 6,
      isRealWallet: false,
      confirmationMode: 'api_action',
    })
    expect(createSandboxWallet(ctx, 'BTC', 'app_1', 'collateralDeposit').requiredConfirmations).toBe(2)
  })
})
