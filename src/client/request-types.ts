/** One request as the client sends it. */
export interface ClientRequest {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  body?: unknown
  /**
   * For POSTs: sent as `Idempotency-Key`; generated when absent, kept across retries. null sends
   * no header at all (to see the server refuse that); "" sends it empty.
   */
  idempotencyKey?: string | null
  /** Overrides the client's API key for this request (null sends none). */
  apiKey?: string | null
  headers?: Record<string, string>
  /**
   * Cancels this request, as the client's `signal` cancels all of them (either one does): the
   * attempt in flight is aborted, a wait for a retry cut short, and it rejects with the reason.
   */
  signal?: AbortSignal | undefined
}

/** One answer as the client received it, whatever its status. */
export interface ClientAnswer {
  status: number
  headers: Headers
  /** The body parsed as JSON, or undefined when empty or not JSON. */
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string
  requestId: string | null
  errorCode: string | null
  idempotencyKey: string | null
  /** Requests sent for this answer: 1 plus the retries. */
  attempts: number
  durationMs: number
  /** True when the body was never read (a scenario's `drop_answer` step): `text` is empty, `body` undefined. */
  bodyUnread?: boolean
  /**
   * True when an earlier attempt got no answer of the server's (a network error, a proxy's
   * 502/503/504) and may have been carried out: this answer may be its replay. Not after a 429,
   * which refused before acting.
   */
  afterLostAnswer?: boolean
}

/** Transport settings shared by every request of a client. */
export interface TransportOptions {
  baseUrl: string
  // `| undefined` throughout: `apiKey: process.env.X` must type-check under exactOptionalPropertyTypes.
  apiKey?: string | null | undefined
  /**
   * Retries after a network error, a proxy's 502/503/504 or a 429, with the same key and body; and
   * after a network error, of a 409 IDEMPOTENCY_KEY_IN_PROGRESS (the lost attempt is still running). Default 3.
   */
  retries?: number | undefined
  /** Per attempt, the answer's body included. Default 30 s. */
  timeoutMs?: number | undefined
  /**
   * Cancels the request: the attempt in flight is aborted, a wait for a retry cut short, and the
   * call rejects with the signal's reason (not a SandboxConnectionError, and nothing more is told
   * to `onAttempt` or `onRetryWait`).
   */
  signal?: AbortSignal | undefined
  /** Upper bound of one Retry-After wait, so a hostile header cannot park CI. Default 30 s. */
  maxRetryAfterMs?: number | undefined
  /**
   * A 429 whose Retry-After is above maxRetryAfterMs: `wait_max` (default) waits that long and
   * retries; `return` returns the 429 at once, for a caller that would rather say why than retry
   * early into another 429.
   */
  overMaxRetryAfter?: 'wait_max' | 'return' | undefined
  /**
   * Called after every attempt, e.g. to log or to check answers against a contract; `wire` is the
   * request as it was sent (URL, headers with the Authorization, body text).
   */
  onAttempt?: ((request: ClientRequest & { idempotencyKey?: string }, answer: ClientAnswer | Error, wire: PreparedRequest) => void) | undefined
  /**
   * Called before each wait for a retry: after a 429 (its Retry-After), a network error (`error`),
   * a proxy's 502/503/504 (`status`; `injected` when it is the page serve --faults answers with),
   * or the lost attempt still in progress. `attempt` is the one that just ended, of `maxAttempts`.
   */
  onRetryWait?: ((wait: { reason: 'rate_limited' | 'network_error' | 'gateway_error' | 'in_progress'; ms: number; attempt: number; maxAttempts: number; request: ClientRequest; error?: Error; status?: number; injected?: boolean }) => void) | undefined
}

/** A request as it goes on the wire: URL, headers (auth, Idempotency-Key, JSON) and body text. */
export interface PreparedRequest {
  url: string
  headers: Record<string, string>
  text: string | undefined
  idempotencyKey: string | null
}
