import { maskUrlPassword } from '../text/url-password.js'
import { sendWebhook } from '../webhooks/sender.js'
import { buildSampleEvents } from './sample-events.js'
import { buildVerifyBattery, type VerifyCase } from './verify-battery.js'
import { describeUnreachableReceiver } from './receiver-failure.js'

/** How much of each answer's body a report keeps: enough for a framework's error message. */
const ANSWER_BYTES = 1024

/** How one case went. */
export interface VerifyCaseResult {
  name: string
  sent: string
  expected: VerifyCase['expect']
  status: number | null
  error: string | null
  ok: boolean
  duration_ms: number
  /** The start of the receiver's answer body (its first 1,024 bytes), null without an answer. */
  answer: string | null
}

/** The whole verdict on a receiver. */
export interface VerifyReport {
  url: string
  passed: number
  failed: number
  cases: VerifyCaseResult[]
}

/** The receiver could not be reached at all (nothing to judge). */
export class ReceiverUnreachableError extends Error {
  override name = 'ReceiverUnreachableError'
}

/** Options of verifyReceiver. */
export interface VerifyReceiverOptions {
  url: string
  secret: string
  /** Per delivery; default 10 s like the server's deliveries. */
  timeoutMs?: number | undefined
  onCase?: ((result: VerifyCaseResult) => void) | undefined
  /** The clock each case is signed by, in ms like Date.now (tests pass a fake one). */
  now?: (() => number) | undefined
}

/**
 * Sends the battery to a receiver one case at a time, each signed as it is sent, and judges each
 * answer: 2xx for good deliveries and the redelivery, non-2xx for every forged, stale or malformed one.
 */
export async function verifyReceiver(options: VerifyReceiverOptions): Promise<VerifyReport> {
  // Before any case is sent: an empty secret signed the battery with "" and blamed the receiver.
  if (typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError(`verifyReceiver needs the signing secret the receiver verifies with (whsec_...), not ${typeof options.secret === 'string' ? '""' : String(options.secret)}`)
  }
  if (!URL.canParse(options.url)) throw new TypeError(`receiver URL must be an http(s) URL, got ${JSON.stringify(options.url)}`)
  const url = new URL(options.url)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`receiver URL must be http or https, got ${url.protocol}`)
  // The report and its errors end up in CI logs: a token or password in the URL does not.
  const shownUrl = maskUrlPassword(url.href)
  const battery = buildVerifyBattery(options.secret, buildSampleEvents())
  const cases: VerifyCaseResult[] = []
  const now = options.now ?? Date.now
  for (const item of battery) {
    // Signed now, not when the battery was built: after slow answers (up to --timeout each), a
    // timestamp taken at the start would be stale and a correct receiver would refuse it.
    const delivery = item.sign(Math.floor(now() / 1000))
    const outcome = await sendWebhook(url.href, delivery.body, delivery.headers, { timeoutMs: options.timeoutMs ?? 10_000, keepAnswerBytes: ANSWER_BYTES })
    const unreachable = cases.length === 0 && outcome.statusCode === null && outcome.error ? describeUnreachableReceiver(shownUrl, outcome.error) : undefined
    if (unreachable) throw new ReceiverUnreachableError(unreachable)
    const is2xx = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
    const ok = outcome.statusCode !== null && (item.expect === '2xx' ? is2xx : !is2xx)
    const result = { name: item.name, sent: item.sent, expected: item.expect, status: outcome.statusCode, error: outcome.error, ok, duration_ms: outcome.durationMs, answer: outcome.answer ?? null }
    cases.push(result)
    options.onCase?.(result)
  }
  const passed = cases.filter((result) => result.ok).length
  return { url: shownUrl, passed, failed: cases.length - passed, cases }
}
