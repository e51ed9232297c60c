/**
 * A problem with how the sandbox was set up (an invalid config, an unreadable or invalid keys
 * file, a bad option). Storage that cannot be opened (data dir, redis) is a StorageError instead.
 * The CLI prints either message without a stack and exits 2.
 */
export class SetupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SetupError'
  }
}
