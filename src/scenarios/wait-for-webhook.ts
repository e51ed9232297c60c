import { findEventType } from '../domain/event-types.js'
import { verifyWebhook } from '../webhooks/signature.js'
import { checkBody, readHeaderValue } from './check-expectation.js'
import { matchValue } from './match-value.js'
import type { StepFailure } from './report-types.js'
import type { Expectation } from './scenario-schema.js'
import type { WebhookInbox } from './webhook-inbox.js'

/** How long a `wait_for_webhook` step waits without a `timeout_ms` of its own. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000

/**
 * Takes the next delivery to `path` and checks it: its type, its signature when a secret is
 * given, and the step's expectations on the event body and headers. `delivered` is false when
 * none came in time. An abort of `signal` ends the wait, rejecting with its reason.
 */
export async function waitForWebhook(
  inbox: WebhookInbox,
  path: string,
  wait: { type: string; secret?: string; timeout_ms?: number },
  expectation: Pick<Expectation, 'body' | 'headers'> = {},
  signal?: AbortSignal,
): Promise<{ delivered: boolean; event?: unknown; failures: StepFailure[]; note?: string }> {
  const timeout = wait.timeout_ms ?? DEFAULT_WEBHOOK_TIMEOUT_MS
  const delivery = await inbox.next(path, timeout, signal)
  if (!delivery) {
    return { delivered: false, failures: [{ field: 'webhook', expected: wait.type, actual: undefined, message: `no delivery of ${wait.type} within ${timeout} ms` }] }
  }
  const failures: StepFailure[] = []
  let event: unknown
  try {
    event = JSON.parse(delivery.rawBody)
  } catch {
    failures.push({ field: 'webhook body', expected: 'JSON', actual: delivery.rawBody.slice(0, 200), message: 'the delivery body is not JSON' })
  }
  const type = (event as { type?: unknown } | undefined)?.type
  // `loan.issued` stands for `sandbox.loan.issued`, as in the commands that take event types.
  const expected = findEventType(wait.type) ?? wait.type
  if (type !== expected) failures.push({ field: 'webhook type', expected, actual: type, message: `the next delivery is ${String(type)}, expected ${expected}` })
  let note = wait.secret ? undefined : 'signature not checked (no secret)'
  if (wait.secret) {
    try {
      verifyWebhook({ secret: wait.secret, body: delivery.rawBody, headers: delivery.headers })
      note = 'signature valid'
    } catch (error) {
      failures.push({ field: 'webhook signature', expected: 'valid', actual: (error as Error).message, message: `signature: ${(error as Error).message}` })
    }
  }
  checkBody(failures, event, expectation.body)
  for (const [name, expected] of Object.entries(expectation.headers ?? {})) {
    const raw = delivery.headers[name.toLowerCase()]
    const actual = typeof raw === 'string' ? readHeaderValue(raw, expected) : raw
    const problem = matchValue(actual, expected)
    if (problem) failures.push({ field: `header ${name}`, expected, actual, message: `header ${name}: ${problem}` })
  }
  return { delivered: true, event, failures, note }
}
