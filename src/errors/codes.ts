/**
 * Every `error_code` the API can answer with, and its HTTP status. The spec's part 7 codes
 * first, then the envelope codes decided in decisions.md. Nothing else may invent a code.
 */
export const ErrorCodes = {
  SANDBOX_API_KEY_REQUIRED: 401,
  SANDBOX_API_KEY_INVALID: 401,
  SANDBOX_API_KEY_DATABASE_REQUIRED: 500,
  SANDBOX_SESSION_REQUIRED: 401,
  SANDBOX_RATE_LIMIT_EXCEEDED: 429,
  INVALID_JSON: 400,
  INVALID_ACTION: 400,
  INVALID_AMOUNT: 400,
  LOAN_NOT_FOUND: 404,
  FLOW_CONFLICT: 409,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  IDEMPOTENCY_KEY_IN_PROGRESS: 409,
  WEBHOOK_URL_REQUIRED: 400,
  WEBHOOK_URL_INVALID: 400,
  WEBHOOK_EVENTS_INVALID: 400,
  WEBHOOK_ENDPOINT_REQUIRED: 409,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  // decisions.md "Envelope"
  INVALID_REQUEST: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  // Unexpected server faults; the body never carries a stack.
  INTERNAL_ERROR: 500,
  // A sandbox extension: a 500 or 503 that `serve --faults` injected (503 is its usual status).
  SANDBOX_FAULT_INJECTED: 503,
} as const

/** An `error_code` value. */
export type ErrorCode = keyof typeof ErrorCodes

/** `details.reason` values of 409 FLOW_CONFLICT. */
export const ConflictReasons = {
  STEP_OUT_OF_ORDER: 'STEP_OUT_OF_ORDER',
  DRAFT_ALREADY_OPEN: 'DRAFT_ALREADY_OPEN',
  OPERATION_IN_PROGRESS: 'OPERATION_IN_PROGRESS',
  OPERATION_NOT_FOUND: 'OPERATION_NOT_FOUND',
  LOAN_NOT_ACTIVE: 'LOAN_NOT_ACTIVE',
  LTV_LIMIT: 'LTV_LIMIT',
  INSUFFICIENT_BALANCE: 'INSUFFICIENT_BALANCE',
  INSUFFICIENT_CONFIRMATIONS: 'INSUFFICIENT_CONFIRMATIONS',
  COLLATERAL_RETURN_NOT_APPLICABLE: 'COLLATERAL_RETURN_NOT_APPLICABLE',
} as const

/** A `details.reason` of a FLOW_CONFLICT. */
export type ConflictReason = keyof typeof ConflictReasons

/**
 * `code` values of the CLI's errors: in `{"error": {"code", "message"}}`, the document a `--json`
 * command prints instead of its report when it cannot give one. Separate from the API's codes:
 * these never appear in an HTTP answer.
 */
export const CliErrorCodes = {
  /** A bad flag, argument or environment value (exit 2). */
  USAGE: 'USAGE',
  /** A scenario file that cannot be loaded, or an unknown scenario id (exit 2). */
  SCENARIO: 'SCENARIO',
  /** An output file (`--junit`, `--output`) that cannot be written (exit 2). */
  OUTPUT: 'OUTPUT',
  /** Setup the library refused: config, keys file, storage (exit 2). */
  SETUP: 'SETUP',
  KEYS: 'KEYS',
  STORAGE: 'STORAGE',
  /** A proxy variable `sandbox run` cannot use: not an http(s) proxy URL (exit 2). */
  PROXY: 'PROXY',
  /** The server or receiver under test could not be reached (exit 2). */
  UNREACHABLE: 'UNREACHABLE',
  /** The server refused the key of `run` or of a `webhook` command that calls the API (exit 2). */
  KEY_REFUSED: 'KEY_REFUSED',
  /** `webhook trigger`: the event has no receiver (no endpoint, disabled, not subscribed, and no forward URL) (exit 2). */
  NO_RECEIVER: 'NO_RECEIVER',
  /** A `webhook` command that calls the API (`trigger`, `deliveries`, `retry`, `register`, `disable`): the API refused a request (exit 1). */
  REFUSED: 'REFUSED',
  /** Checks ran and some failed (exit 1). */
  FAILED: 'FAILED',
  /** A bug: an error nobody anticipated (exit 1; the stack goes to stderr). */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  /** SIGINT or SIGTERM stopped the command before its report (the signal's exit status). */
  INTERRUPTED: 'INTERRUPTED',
} as const

/** A CLI error `code` (listen failures also carry the system's: EADDRINUSE, EACCES, EADDRNOTAVAIL). */
export type CliErrorCode = keyof typeof CliErrorCodes
