import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/server/config.js'
import { loadFixtures } from '../../src/server/fixtures.js'

describe('config overrides', () => {
  it('refuses __proto__, constructor and other inherited names as unknown keys, as a --config file holds them', () => {
    const base = loadFixtures().config
    for (const text of ['{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', '{"rates":{"toString":1}}']) {
      const overrides = JSON.parse(text)
      expect(() => resolveConfig(base, overrides, '--config x.json'), text).toThrow(/--config x\.json is not a valid sandbox config: unknown key (__proto__|constructor|rates\.toString) \(see/)
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('names the path of a value the schema refuses', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, { rates: { btc_usd: 'many' }, risk: { max_ltv_percent: 250 } } as never, '--config x.json'))
      .toThrow(/^--config x\.json is not a valid sandbox config: rates\.btc_usd: .+; risk\.max_ltv_percent: .+/)
  })

  it('refuses a file holding null instead of reading it as no changes', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, null as never, '--config x.json')).toThrow('--config x.json is not a valid sandbox config: (root): Invalid input: expected object, received null')
    expect(resolveConfig(base, undefined, '--config x.json')).toEqual(base)
  })

  it('names the key of its level that a misspelt one meant', () => {
    const base = loadFixtures().config
    const overrides = { borow_rates: { fixed: 10 }, risk: { max_ltv_precent: 60, x: 1 }, rates: { btc_usdt: 1 } }
    expect(() => resolveConfig(base, overrides as never, '--config x.json')).toThrow('--config x.json is not a valid sandbox config: unknown keys borow_rates (did you mean borrow_rates?), risk.max_ltv_precent (did you mean max_ltv_percent?), risk.x, rates.btc_usdt (did you mean btc_usd?) (see GET /api/sandbox/config for the keys)')
  })

  it('refuses a currencies list without USDT, which spec 4.3 says is accepted and a request without loan_currency borrows in', () => {
    const base = loadFixtures().config
    for (const currencies of [['USDC'], ['usdt'], ['USDT ']]) {
      expect(() => resolveConfig(base, { currencies }, '--config x.json'), JSON.stringify(currencies))
        .toThrow(/^--config x\.json is not a valid sandbox config: currencies: must include USDT \(spec 4\.3: USDT is an accepted loan_currency, and the one a request without loan_currency borrows in\); list others beside it, as \["USDT","USDC"\]$/)
    }
    expect(() => resolveConfig(base, { currencies: ['USDT', 'USDC', 'USDT'] }, '--config x.json')).toThrow('--config x.json is not a valid sandbox config: currencies: lists USDT twice')
    expect(resolveConfig(base, { currencies: ['USDT', 'USDC'] }).currencies).toEqual(['USDT', 'USDC'])
  })

  it('refuses risk and limits under which no loan at all could be issued, saying which figures clash', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, { risk: { max_ltv_percent: 0 } }, '--config x.json'))
      .toThrow(/^--config x\.json is not a valid sandbox config: risk\.max_ltv_percent: Too small: expected number to be >0$/)
    // 0.01 BTC at 95,000 USD carries at most 475 USDT at 50 %: below a 1,000 USDT minimum loan.
    expect(() => resolveConfig(base, { limits: { collateral_btc: { max: 0.01 }, loan_amount: { min: 1000 } } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: no loan fits: the most collateral, limits.collateral_btc.max 0.01 BTC at rates.btc_usd 95000, carries at most 475 USDT at risk.max_ltv_percent 50, below limits.loan_amount.min 1000')
    expect(resolveConfig(base, { limits: { collateral_btc: { max: 0.01 }, loan_amount: { min: 475 } } }).limits.loan_amount.min).toBe(475)
    // Too many satoshis for a number: it carries any loan, and is no crash at start.
    expect(resolveConfig(base, { limits: { collateral_btc: { max: 1e301 } } }).limits.collateral_btc.max).toBe(1e301)
  })

  it('refuses a liquidation threshold below the maximum LTV, where a loan issued at the maximum would be past it', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, { risk: { liquidation_ltv_percent: 30 } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: risk.liquidation_ltv_percent 30 is below risk.max_ltv_percent 50: a loan issued at the maximum LTV would be past its liquidation threshold')
    expect(resolveConfig(base, { risk: { max_ltv_percent: 80 } }).risk.max_ltv_percent).toBe(80)
  })

  it('names both figures of a range whose min exceeds its max, the one the file did not set included', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, { limits: { loan_amount: { min: 5_000_000 } } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: limits.loan_amount: min 5000000 is above max 1000000')
  })

  it('refuses limits whose smallest loan needs more collateral than a new key\'s wallet holds (fixtures/wallet.json: 2 BTC)', () => {
    const base = loadFixtures().config
    // 100,000 USDT at 50 % of 95,000 USD/BTC needs 2.10526316 BTC: every start_collateral_transfer was 409 INSUFFICIENT_BALANCE.
    expect(() => resolveConfig(base, { limits: { loan_amount: { min: 100_000 } } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: no loan fits a new key\'s wallet: the smallest loan, limits.loan_amount.min 100000 at risk.max_ltv_percent 50 and rates.btc_usd 95000, needs 2.10526316 BTC of collateral, and every key\'s wallet starts with 2 BTC (fixtures/wallet.json)')
    expect(() => resolveConfig(base, { limits: { collateral_btc: { min: 2.5 } } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: no loan fits a new key\'s wallet: limits.collateral_btc.min 2.5 BTC is more than the 2 BTC every key\'s wallet starts with (fixtures/wallet.json)')
    expect(resolveConfig(base, { limits: { loan_amount: { min: 95_000 }, collateral_btc: { min: 2 } } }).limits.loan_amount.min).toBe(95_000)
  })

  it('refuses an interest period longer than the loan\'s term, which would charge more interest at issuance than the whole loan earns', () => {
    const base = loadFixtures().config
    expect(() => resolveConfig(base, { terms: { interest_payment_months: 24 } }, '--config x.json'))
      .toThrow('--config x.json is not a valid sandbox config: terms.interest_payment_months 24 is longer than terms.principal_payment_months 12, the loan\'s term')
    expect(resolveConfig(base, { terms: { interest_payment_months: 12 } }).terms.interest_payment_months).toBe(12)
  })
})
