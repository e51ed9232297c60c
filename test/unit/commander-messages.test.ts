import { describe, expect, it } from 'vitest'
import { describeCommanderError } from '../../src/cli/commander-messages.js'

describe('describeCommanderError', () => {
  it('words a refused value as the CLI words its own, naming the long flag', () => {
    expect(describeCommanderError("error: option '--status <status>' argument 'lost' is invalid. one of pending, delivered, retrying, failed\n"))
      .toBe('--status: invalid value "lost": expected one of pending, delivered, retrying, failed')
    expect(describeCommanderError("error: option '-t, --tail <n>' argument 'x y' is invalid. a whole number\n")).toBe('--tail: invalid value "x y": expected a whole number')
    // A value with quotes or a line break is shown as JSON shows it.
    expect(describeCommanderError("error: option '--tail <n>' argument 'a\"b\nc' is invalid. a whole number\n")).toBe('--tail: invalid value "a\\"b\\nc": expected a whole number')
  })

  it('says a flag needs a value, as an empty value is told', () => {
    expect(describeCommanderError("error: option '--port <port>' argument missing\n")).toBe('--port needs a value')
  })

  it('puts commander\'s suggestion inline, and keeps other messages as they are', () => {
    expect(describeCommanderError("error: unknown command 'srve'\n(Did you mean serve?)\n")).toBe("unknown command 'srve' (did you mean serve?)")
    expect(describeCommanderError("error: unknown option '--prot'\n(Did you mean --port?)\n")).toBe("unknown option '--prot' (did you mean --port?)")
    expect(describeCommanderError("error: too many arguments for 'list'. Expected 0 arguments but got 1.\n")).toBe("too many arguments for 'list'. Expected 0 arguments but got 1.")
  })
})
