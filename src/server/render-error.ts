import { StorageError, UnusableDocumentError } from '../storage/storage-error.js'
import { ApiError, toApiError } from './api-error.js'
import type { RouteAnswer } from './route-types.js'
import type { SandboxServices } from './services.js'

/**
 * Renders an ApiError (or an unexpected failure) into the spec's error envelope. `write`: the
 * request asks for a change (a POST or DELETE route), so a storage failure leaves it unconfirmed.
 */
export function renderError(error: unknown, services: SandboxServices, write = true): RouteAnswer {
  const api = toApiError(error)
  if (api) return { status: api.status, body: api.toBody(), headers: api.extraHeaders, errorCode: api.code }
  if (error instanceof UnusableDocumentError) {
    services.logError(error)
    const unusable = new ApiError('SANDBOX_API_KEY_DATABASE_REQUIRED', 'The stored state of this key cannot be used (damaged, or written by a newer sandbox): the server log says which document and what to do. Nothing was changed.')
    return { status: unusable.status, body: unusable.toBody(), errorCode: unusable.code }
  }
  if (error instanceof StorageError) {
    services.logError(error)
    // A write that timed out may still land (a paused redis catches up): say what is known. A read
    // has no Idempotency-Key to retry with, and nothing to confirm.
    const database = new ApiError('SANDBOX_API_KEY_DATABASE_REQUIRED', write
      ? 'The sandbox storage could not be read or written. A change this request asked for is not confirmed (it was applied whole or not at all): retry with the same Idempotency-Key, which applies it at most once.'
      : 'The sandbox storage could not be read. This request changes nothing: retry it (the server log says why storage failed).')
    return { status: database.status, body: database.toBody(), errorCode: database.code }
  }
  services.logError(error)
  const internal = new ApiError('INTERNAL_ERROR', 'Unexpected sandbox error; see the server log.')
  return { status: internal.status, body: internal.toBody(), errorCode: internal.code }
}
