import { randomBytes } from 'node:crypto'

const POOL_SIZE = 4096
let pool = randomBytes(POOL_SIZE)
let offset = 0

/** Returns `bytes` random bytes as hex, drawn from a pooled buffer so ids stay cheap on hot paths. */
function randomHex(bytes: number): string {
  if (offset + bytes > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  const hex = pool.toString('hex', offset, offset + bytes)
  offset += bytes
  return hex
}

/** Creates a random id such as `loan_4f1c...` (12 random bytes). */
export function createId(prefix: string): string {
  return `${prefix}_${randomHex(12)}`
}

/** Creates a request id, `req_` + 20 hex characters. */
export function createRequestId(): string {
  return `req_${randomHex(10)}`
}
