/** A non-2xx answer of the sandbox API, as a typed error. */
export class SandboxApiError extends Error {
  override name = 'SandboxApiError'
  constructor(
    readonly status: number,
    /** The answer's `error_code`, or null when the body carried none (not our API, or no body). */
    readonly errorCode: string | null,
    /** The answer's request id (body `request_id`, else the `x-request-id` header). */
    readonly requestId: string | null,
    /** The parsed body, or the raw text when it was not JSON. */
    readonly body: unknown,
    method: string,
    path: string,
  ) {
    // decisions.md "Envelope": errors carry their text in `error`.
    const text = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined
    const message = typeof text === 'string' ? text : ''
    super(`${method} ${path} answered ${status}${errorCode ? ` ${errorCode}` : ''}${message ? `: ${message}` : ''}`)
  }
}

/** The API could not be reached at all (refused, reset, DNS, timeout), after every retry. */
export class SandboxConnectionError extends Error {
  override name = 'SandboxConnectionError'
  constructor(readonly url: string, readonly attempts: number, options: { cause: unknown }) {
    super(`cannot reach ${url} (${describeCause(options.cause)}) after ${attempts} attempt${attempts === 1 ? '' : 's'}`, options)
  }
}

/** The most telling part of a network error: undici nests the socket's code under "fetch failed". */
function describeCause(cause: unknown): string {
  let current = cause as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown } | undefined
  let message: string | undefined
  for (let depth = 0; current && depth < 5; depth++, current = current.cause as typeof current) {
    if (typeof current.code === 'string' && /^E[A-Z]+$/.test(current.code)) return current.code
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return 'timed out'
    if (typeof current.message === 'string' && current.message) message = current.message
  }
  return message ?? 'network error'
}
