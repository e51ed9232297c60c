/** One expectation a step did not meet. */
export interface StepFailure {
  /** `status`, `error_code`, `body.<path>`, `header.<name>`, `capture.<var>`, ... */
  field: string
  expected: unknown
  actual: unknown
  message: string
  /** For a body path or capture that found nothing: where the path stops and what is there (`activeLoans has 1 element, so there is no index 1`). */
  hint?: string
}

/** What one step did and saw. */
export interface StepReport {
  index: number
  name: string
  kind: 'request' | 'replay' | 'wait_for_webhook' | 'recover'
  method: string
  path: string
  status: number | null
  error_code: string | null
  duration_ms: number
  ok: boolean
  failures: StepFailure[]
  /** What was sent (body and Idempotency-Key), kept for failure reports. */
  sent?: { body?: unknown; idempotency_key?: string | null }
  /** The answer body (or event), kept when the step failed. */
  received?: unknown
  note?: string
}

/** The outcome of one scenario. */
export interface ScenarioReport {
  id: string
  name: string
  file: string
  tags: string[]
  status: 'passed' | 'failed' | 'skipped'
  duration_ms: number
  requests: number
  steps: StepReport[]
  /**
   * How many steps come after the one it failed at: a scenario stops at its first failed step,
   * so they were not run (clean-up steps included). Absent when none.
   */
  steps_not_run?: number
  /**
   * Why it failed outside an expectation, or why it was skipped. On a scenario that stopped the
   * run (`connection_error`, `key_refused`), why it stopped: `step N (name): ...`, the step left
   * out only for a server that had answered nothing of the run yet (the server is the problem).
   */
  error?: string
  /**
   * The server could not be reached: the run stops with exit code 2. The step it stopped at is the
   * last of `steps`, failed, its note saying what each attempt ended in.
   */
  connection_error?: boolean
  /**
   * The server refused one of the run's keys (401 SANDBOX_API_KEY_INVALID, ..._REQUIRED or
   * SANDBOX_SESSION_REQUIRED where the step expected no 401): every later scenario would fail the
   * same way, so the run stops with exit code 2. The failed step's note says what to do.
   */
  key_refused?: boolean
  /** Only in the JUnit report written when a signal stopped the run: the scenario that was running. */
  interrupted?: boolean
}

/** The outcome of a run. */
export interface RunReport {
  base_url: string
  started_server: boolean
  /** The server's `api_version`: this package's for an in-process server, a remote one's GET config; null for a local one (not asked) or unread. */
  api_version: string | null
  started_at: string
  duration_ms: number
  passed: number
  failed: number
  skipped: number
  requests: number
  scenarios: ScenarioReport[]
}
