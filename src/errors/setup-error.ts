/**
 * A problem with how the sandbox was set up (unreadable config or keys file, unusable data dir,
 * bad option). The CLI prints its message without a stack and exits 2.
 */
export class SetupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SetupError'
  }
}
