import { StorageError } from './storage-error.js'

/**
 * What a closing server could not write because storage refused it (redis gone): `what` names
 * the part that is lost, `cause` why storage refused it.
 */
export class UnwrittenError extends StorageError {
  constructor(readonly what: string, cause: Error | undefined) {
    super(`${what} not written${cause ? ` (${describeRefusal(cause)})` : ''}`, { cause })
    this.name = 'UnwrittenError'
  }
}

/**
 * A refusal as a stop reports it: without the "retrying in the background" of a redis that is not
 * connected, which a stopped server no longer does.
 */
function describeRefusal(error: Error): string {
  return error.message.replace(/; retrying in the background$/, '')
}

/**
 * One error for what a close could not write, or undefined when it wrote everything: "stopped
 * without storage's last writes (why): what, what; what was answered is kept".
 */
export function joinUnwritten(errors: UnwrittenError[]): StorageError | undefined {
  if (errors.length === 0) return undefined
  const cause = errors.map((error) => error.cause).find((reason) => reason instanceof Error)
  const why = cause ? ` (${describeRefusal(cause)})` : ''
  return new StorageError(`stopped without storage's last writes${why}: ${errors.map((error) => error.what).join('; ')}; what was answered is kept`, { cause })
}
