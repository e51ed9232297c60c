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
})
