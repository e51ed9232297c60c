import { describe, expect, it } from 'vitest'
import { readForgetIdleSetting } from '../../src/cli/forget-idle-setting.js'

const OPEN = { value: undefined, source: '--keys' }
const read = (value: string) => readForgetIdleSetting({ value, source: '--forget-idle-keys' }, OPEN)

describe('serve --forget-idle-keys', () => {
  it('takes 1h up to 3650d', () => {
    expect(read('1h')).toBe(3_600_000)
    expect(read('3650d')).toBe(3650 * 86_400_000)
  })

  it('says the range it takes, from 1h, not the 1ms other durations may be', () => {
    expect(() => read('3651d')).toThrow('--forget-idle-keys: duration "3651d" is out of range: from 1h to 3650d')
  })

  it('offers, for a malformed one, only examples it takes', () => {
    expect(() => read('7')).toThrow('--forget-idle-keys: invalid duration "7": expected a number and ms, s, m, h, d or w (e.g. 30d)')
  })

  it('explains why a duration under an hour is refused, one that rounds to 0 ms too', () => {
    for (const text of ['30m', '0.0001ms']) {
      expect(() => read(text)).toThrow(`--forget-idle-keys: ${text} is shorter than the 1h it takes at least (a key waiting on a webhook retry or between CI steps must keep its state); give e.g. 12h or 7d`)
    }
  })
})
