import { HTTPError } from 'h3'
import { ErrorCodes, type ErrorCode } from '../errors/codes.js'
import { SandboxError } from '../errors/sandbox-error.js'

/**
 * An API error as h3 sees it. Subclassing HTTPError keeps h3 from logging expected failures as
 * crashes; the pipeline renders it into the spec's error envelope.
 */
export class ApiError extends HTTPError {
  readonly code: ErrorCode
  readonly details: Record<string, unknown> | undefined
  readonly extraHeaders: Record<string, string>

  /** `status`: another than the code's own, as a 408 INVALID_REQUEST (a body that did not arrive in time). */
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}, status: number = ErrorCodes[code]) {
    super({ status, message })
    this.code = code
    this.details = details
    this.extraHeaders = headers
  }

  /** The envelope body without `request_id`. */
  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { error_code: this.code, error: this.message }
    if (this.details !== undefined) body.details = this.details
    return body
  }
}

/** Turns a domain SandboxError into an ApiError; passes ApiErrors through. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error
  if (error instanceof SandboxError) return new ApiError(error.code, error.message, error.details)
  return undefined
}
