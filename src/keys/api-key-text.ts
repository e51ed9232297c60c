import { randomBytes } from 'node:crypto'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Generates a new key: `sk_sandbox_` + 32 random letters and digits. */
export function generateApiKey(): string {
  const bytes = randomBytes(32)
  let suffix = ''
  for (const byte of bytes) suffix += ALPHABET[byte % ALPHABET.length]
  return `sk_sandbox_${suffix}`
}

/** Shows a key without revealing it: `sk_sandbox_abcd…wxyz`. */
export function maskApiKey(key: string): string {
  const body = key.startsWith('sk_sandbox_') ? key.slice('sk_sandbox_'.length) : key
  return body.length <= 8 ? `sk_sandbox_${'*'.repeat(body.length)}` : `sk_sandbox_${body.slice(0, 4)}…${body.slice(-4)}`
}

// The server's rule for a bearer token (decisions.md "Authentication").
const KEY_FORMAT = /^sk_sandbox_[A-Za-z0-9_]{16,}$/
const MASKED_FORMAT = /^sk_sandbox_[A-Za-z0-9_]{4}…[A-Za-z0-9_]{4}$/

/** Whether `key` has the form of a sandbox API key (`sk_sandbox_` + 16 or more of A-Z a-z 0-9 _). */
export function isWellFormedKey(key: string): boolean {
  return KEY_FORMAT.test(key)
}

/** Whether `text` is a key as maskApiKey shows it. */
export function isMaskedKey(text: string): boolean {
  return MASKED_FORMAT.test(text)
}

const TYPED_MASK = /^(sk_sandbox_[A-Za-z0-9_]{4})\.\.\.([A-Za-z0-9_]{4})$/

/**
 * `text` with a masked key's `...` read as the `…` that maskApiKey shows: few keyboards have `…`,
 * and a key holds no dots, so nothing else is changed.
 */
export function readTypedMask(text: string): string {
  return text.replace(TYPED_MASK, '$1…$2')
}
