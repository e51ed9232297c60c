import { describe, expect, it } from 'vitest'
import { describeVerifyFailure } from '../../src/cli/verify-failure.js'
import { buildSampleEvents } from '../../src/webhook-tools/sample-events.js'
import { buildVerifyBattery } from '../../src/webhook-tools/verify-battery.js'
import type { VerifyCaseResult, VerifyReport } from '../../src/webhook-tools/index.js'

const battery = buildVerifyBattery('whsec_verify_failure_test', buildSampleEvents())

/** The report of a receiver answering the good cases with GOOD and the bad ones with BAD (null: timed out). */
function reportOf(good: number | null, bad: number | null): VerifyReport {
  const cases: VerifyCaseResult[] = battery.map((item) => {
    const status = item.expect === '2xx' ? good : bad
    const ok = status !== null && (item.expect === '2xx') === (status >= 200 && status < 300)
    return { name: item.name, sent: item.sent, expected: item.expect, status, error: status === null ? 'timed out after 10000 ms' : null, ok, duration_ms: 1, answer: null }
  })
  const passed = cases.filter((result) => result.ok).length
  return { url: 'http://127.0.0.1:3000/webhooks', passed, failed: cases.length - passed, cases }
}

describe('webhook verify\'s last line', () => {
  it('tells a 5xx to every good delivery as the receiver failing, with where to look, not only as a secret to check', () => {
    // express.json() ahead of constructWebhookEvent: its TypeError is a 500 from the framework.
    expect(describeVerifyFailure(reportOf(500, 500), 10_000)).toBe('the receiver failed on all 14 correctly signed deliveries (it answered 500): a 5xx is an error in the receiver, not a refusal; its log says what it threw (verifyWebhook and constructWebhookEvent throw a TypeError naming what they were given in place of the raw body). If it answers 5xx to a signature it refuses, is --secret (or SANDBOX_WEBHOOK_SECRET) the secret it verifies with?')
    expect(describeVerifyFailure(reportOf(400, 400), 10_000)).toBe('the receiver refused all 14 correctly signed deliveries (it answered 400): is --secret (or SANDBOX_WEBHOOK_SECRET) the secret it verifies with?')
  })

  it('tells a receiver answering 2xx to every forged delivery (it answers before it verifies, or never does) as such', () => {
    expect(describeVerifyFailure(reportOf(200, 200), 10_000)).toBe('the receiver accepted all 11 forged, stale or malformed deliveries (it answered 200): does it verify each delivery before it answers?')
    // One forged case accepted among refused ones is a check that is wrong, not missing.
    const one = reportOf(200, 400)
    one.cases.find((result) => result.name === 'stale timestamp')!.status = 200
    one.cases.find((result) => result.name === 'stale timestamp')!.ok = false
    expect(describeVerifyFailure({ ...one, passed: 24, failed: 1 }, 10_000)).toBe('the receiver mishandled 1 of 25 deliveries')
  })

  it('tells a receiver refusing only the partner updates a re-serialization changes that it checks a parsed body written again', () => {
    const refuse = (names: string[]) => {
      const report = reportOf(200, 400)
      for (const result of report.cases.filter((one) => names.includes(one.name))) Object.assign(result, { status: 401, ok: false })
      return { ...report, passed: report.cases.length - names.length, failed: names.length }
    }
    // JSON.stringify(req.body) gives the sandbox's compact bytes back; only the indented copy differs.
    expect(describeVerifyFailure(refuse(['signed sandbox.partner.updated (indented JSON)']), 10_000)).toBe('the receiver refused only the partner update written as indented JSON: it checks a body it parsed and wrote again (JSON.stringify(req.body) behind express.json(), Python\'s json.dumps), not the bytes as received; take the raw body')
    // Python's json.dumps escapes the non-ASCII name too.
    expect(describeVerifyFailure(refuse(['signed sandbox.partner.updated', 'signed sandbox.partner.updated (indented JSON)']), 10_000)).toMatch(/^the receiver refused only the partner updates written with non-ASCII characters and as indented JSON: it checks a body it parsed/)
    // The compact partner update alone refused is something else.
    expect(describeVerifyFailure(refuse(['signed sandbox.partner.updated']), 10_000)).toBe('the receiver mishandled 1 of 25 deliveries')
  })

  it('tells a receiver answering no good delivery in time that the server waits 10 s and sends it again', () => {
    expect(describeVerifyFailure(reportOf(null, 400), 10_000)).toBe('the receiver answered none of the 14 correctly signed deliveries within 10 s (--timeout): the server waits 10 s for an answer, then sends the delivery again; answer 2xx once it is verified and do slow work after')
    expect(describeVerifyFailure(reportOf(null, null), 2_000)).toMatch(/^the receiver answered none of the 14 correctly signed deliveries within 2 s \(--timeout\)/)
  })
})
