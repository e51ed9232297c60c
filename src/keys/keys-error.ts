/**
 * A keys file that cannot be read, parsed or written, or a KEY that matches no single record.
 * The CLI shows its message without a stack and exits 2.
 */
export class KeysError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KeysError'
  }
}
