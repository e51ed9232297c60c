import { describe, expect, it } from 'vitest'
import { DEFAULT_SERVER_TIMEOUTS, resolveServerTimeouts } from '../../src/server/server-timeouts.js'

describe('resolveServerTimeouts', () => {
  it('keeps serve\'s defaults for what is not overridden', () => {
    expect(resolveServerTimeouts({ headersMs: 500 })).toEqual({ ...DEFAULT_SERVER_TIMEOUTS, headersMs: 500 })
    expect(DEFAULT_SERVER_TIMEOUTS).toMatchObject({ headersMs: 15_000, requestMs: 30_000, keepAliveMs: 5_000, idleSocketMs: 30_000 })
  })

  it('refuses values Node would misread instead of passing them on', () => {
    expect(() => resolveServerTimeouts({ requestMs: -1 })).toThrow(/requestMs must be a whole number/)
    expect(() => resolveServerTimeouts({ idleSocketMs: 1.5 })).toThrow(/idleSocketMs/)
    expect(() => resolveServerTimeouts({ checkIntervalMs: 0 })).toThrow(/checkIntervalMs must be above 0/)
    expect(() => resolveServerTimeouts({ headersMs: 2000, requestMs: 1000 })).toThrow(/headersMs \(2000\) must not exceed/)
  })

  it('lets 0 turn a limit off, as in Node', () => {
    expect(resolveServerTimeouts({ headersMs: 0, requestMs: 0, idleSocketMs: 0 })).toMatchObject({ headersMs: 0, requestMs: 0, idleSocketMs: 0 })
  })
})
