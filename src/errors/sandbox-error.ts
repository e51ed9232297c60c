import { ErrorCodes, type ErrorCode } from './codes.js'

/**
 * An API-level failure with its spec `error_code`. Thrown by the pure domain and by request
 * validation; the server turns it into the error envelope. Carries no I/O and no h3 types.
 */
export class SandboxError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'SandboxError'
    this.code = code
    this.status = ErrorCodes[code]
    if (details !== undefined) this.details = details
  }
}

/** Shorthand for a 409 FLOW_CONFLICT with a `details.reason`. */
export function flowConflict(reason: string, message: string, details: Record<string, unknown> = {}): SandboxError {
  return new SandboxError('FLOW_CONFLICT', message, { reason, ...details })
}
