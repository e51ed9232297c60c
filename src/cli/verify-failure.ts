import type { VerifyCaseResult, VerifyReport } from '../webhook-tools/index.js'

const is2xx = (result: VerifyCaseResult) => result.status !== null && result.status >= 200 && result.status < 300
const isTimeout = (result: VerifyCaseResult) => result.status === null && /^timed out\b/.test(result.error ?? '')

/** The statuses RESULTS got, in order, once each: "400" or "401, 403". */
function listStatuses(results: readonly VerifyCaseResult[]): string {
  return [...new Set(results.map((result) => result.status))].sort().join(', ')
}

/**
 * A receiver that a delivery crashed refuses every later one: those were never judged. The crash
 * shows as the first unanswered case before the first refused connection (a dying process may
 * reset one more connection before the port refuses them), or, with none, the answered case just
 * before. Undefined when the receiver kept taking connections.
 */
function describeCrash(report: VerifyReport): string | undefined {
  const gone = report.cases.findIndex((result, index) => index > 0 && result.status === null && /^ECONNREFUSED\b/.test(result.error ?? ''))
  if (gone <= 0) return undefined
  let first = gone
  while (first > 0 && report.cases[first - 1]!.status === null) first--
  const crashed = first === gone ? gone - 1 : first
  const last = report.cases[crashed]!
  const answer = last.status === null ? `no answer: ${last.error}` : `it answered ${last.status}`
  const after = report.cases.length - crashed - 1
  // A receiver restarted meanwhile (a watcher such as nodemon) answers again: count only the unanswered.
  const unanswered = report.cases.slice(crashed + 1).filter((result) => result.status === null).length
  const which = unanswered === after ? `The ${after} case${after === 1 ? '' : 's'} after it` : `${unanswered} of the ${after} cases after it`
  return `the receiver stopped taking connections after "${last.name}" (${answer}): did that delivery crash it? ${which} got no answer, so ${unanswered === 1 ? 'it was' : 'they were'} not judged`
}

/** Why every correctly signed delivery got no 2xx, with where to look. */
function describeRefusal(good: readonly VerifyCaseResult[]): string {
  const statuses = listStatuses(good)
  const lead = `the receiver refused all ${good.length} correctly signed deliveries (it answered ${statuses})`
  if (good.every((result) => result.status! >= 300 && result.status! < 400)) return `${lead}: deliveries follow no redirect; give the URL it redirects to`
  if (statuses === '404' || statuses === '405') return `${lead}: does it take POST requests at this URL's path?`
  // A 5xx is the receiver failing, most often on what it handed to the check (a body a JSON
  // parser already took); asked about --secret, its developer looked at the wrong thing.
  if (good.every((result) => result.status! >= 500)) {
    return `the receiver failed on all ${good.length} correctly signed deliveries (it answered ${statuses}): a 5xx is an error in the receiver, not a refusal; its log says what it threw (verifyWebhook and constructWebhookEvent throw a TypeError naming what they were given in place of the raw body). If it answers 5xx to a signature it refuses, is --secret (or SANDBOX_WEBHOOK_SECRET) the secret it verifies with?`
  }
  return `${lead}: is --secret (or SANDBOX_WEBHOOK_SECRET) the secret it verifies with?`
}

/**
 * Why the receiver failed, for `webhook verify`'s last line. One that stops taking connections
 * midway was most likely crashed by the delivery before. One that refuses every correctly signed
 * delivery is more often checked with another secret (serve's forward secret and an endpoint's
 * differ) or at another path than broken; one that accepts every forged one checks nothing before
 * it answers; one that answers no good delivery in time would time out on the server's too.
 */
export function describeVerifyFailure(report: VerifyReport, timeoutMs: number): string {
  const crash = describeCrash(report)
  if (crash) return crash
  const good = report.cases.filter((result) => result.expected === '2xx')
  const bad = report.cases.filter((result) => result.expected !== '2xx')
  if (good.every((result) => result.status !== null && !is2xx(result))) return describeRefusal(good)
  if (good.every(isTimeout)) {
    return `the receiver answered none of the ${good.length} correctly signed deliveries within ${timeoutMs / 1000} s (--timeout): the server waits 10 s for an answer, then sends the delivery again; answer 2xx once it is verified and do slow work after`
  }
  // The cases whose bytes a parse and re-serialization changes (non-ASCII escaped, indentation dropped), and no other.
  const failed = report.cases.filter((result) => !result.ok)
  if (failed.some((result) => result.name.endsWith('(indented JSON)')) && failed.every((result) => result.expected === '2xx' && /^signed sandbox\.partner\.updated( \(indented JSON\))?$/.test(result.name))) {
    return `the receiver refused only the partner update${failed.length === 1 ? ' written as indented JSON' : 's written with non-ASCII characters and as indented JSON'}: it checks a body it parsed and wrote again (JSON.stringify(req.body) behind express.json(), Python's json.dumps), not the bytes as received; take the raw body`
  }
  if (bad.length > 0 && bad.every(is2xx)) {
    return `the receiver accepted all ${bad.length} forged, stale or malformed deliveries (it answered ${listStatuses(bad)}): does it verify each delivery before it answers?`
  }
  return `the receiver mishandled ${report.failed} of ${report.cases.length} deliveries`
}
