import type { Random } from './random.js'

/**
 * Invalid request bodies derived from a valid one: the ways a client's body goes wrong that the
 * zod schemas must turn into a 4xx, never a 5xx. Each is raw text, so keys JSON.stringify would
 * drop or rename (`__proto__`) reach the server as sent.
 */

const WEIRD_VALUES: unknown[] = [
  null, true, false, '', ' ', '12', '1e3', 'NaN', -1, 0, -0, 0.1 + 0.2, 1e-9, 123.456789123, 1e21, 1e308,
  Number.MAX_SAFE_INTEGER + 2, 2 ** 53, -1e308, [], {}, [1], { a: 1 }, '\u0000', 'é🙂\u202e', 'x'.repeat(300),
]

/** A JSON text nested `depth` levels deep. */
function nested(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`
}

/** The raw text of an invalid variant of `valid`. */
export function makeBadBody(random: Random, valid: Record<string, unknown>): string {
  const fields = Object.keys(valid)
  const kind = random.weighted({ wrongValue: 6, missing: 2, extra: 2, proto: 2, deep: 1, notObject: 2, notJson: 1, duplicate: 1 })
  switch (kind) {
    case 'wrongValue': {
      const field = fields.length && random.chance(0.8) ? random.pick(fields) : random.pick(['amount', 'action', 'collateral_btc', 'confirmations'])
      return JSON.stringify({ ...valid, [field]: random.pick(WEIRD_VALUES) })
    }
    case 'missing': {
      const copy = { ...valid }
      if (fields.length) delete copy[random.pick(fields)]
      return JSON.stringify(copy)
    }
    case 'extra':
      return JSON.stringify({ ...valid, [random.pick(['extra', 'request_id', 'idempotency_replayed', 'status', 'debt'])]: random.pick(WEIRD_VALUES) })
    case 'proto': {
      const key = random.pick(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'])
      const value = random.pick(['{"action":"run_kyt","amount":1}', '{"polluted":true}', 'null', '1', '"x"'])
      const text = JSON.stringify(valid)
      return text === '{}' ? `{"${key}":${value}}` : `{"${key}":${value},${text.slice(1)}`
    }
    case 'deep':
      return JSON.stringify({ ...valid, extra: 0 }).replace('"extra":0', `"extra":${nested(random.pick([10, 63, 64, 65, 200, 5000]))}`)
    case 'notObject':
      return random.pick(['null', '[]', '"x"', '1', 'true', `[${JSON.stringify(valid)}]`])
    case 'notJson':
      return random.pick(['{', '{"action":', "{'a':1}", '\u0000', '{"a":1}x', 'NaN', '{"a":NaN}', '\ufeff{}'])
    case 'duplicate': {
      const field = fields.length ? random.pick(fields) : 'action'
      const text = JSON.stringify(valid)
      return `{"${field}":${JSON.stringify(random.pick(WEIRD_VALUES))}${text === '{}' ? '' : `,${text.slice(1, -1)}`}}`
    }
  }
}
