import { makeBadBody } from './bad-bodies.js'
import { eventsOf } from './event-log.js'
import type { FuzzAnswer } from './fuzz-client.js'
import { checkLoanState } from './money-checks.js'
import { checkDeliveryLog } from './delivery-log-check.js'
import { predictStatus } from './predict.js'
import { planCreateLoan, planDirectAction, planFlowStep, planPartner, planRepaymentStep, type PlannedRequest } from './steps.js'
import { checkTransition } from './transitions.js'
import { INITIAL, normalize, parseLoose, same, strip, stripSecret, type Walk } from './walk-types.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

const isLoanPath = (path: string) => path.startsWith('/api/sandbox/loans')
const NOT_STORED = new Set(['IDEMPOTENCY_KEY_CONFLICT', 'IDEMPOTENCY_KEY_IN_PROGRESS', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'])
/** Whether the server stores this answer for replays (decisions.md "Idempotency"). */
export const isStored = (answer: FuzzAnswer) => (answer.status === 200 || answer.status === 404 || answer.status === 409) && !NOT_STORED.has(answer.body?.error_code)
const replayed = (answer: FuzzAnswer) => answer.headers.get('idempotent-replayed') === 'true'

/** True when the loan named in an action path is closed in `state`. */
function closedIn(path: string, state: any): boolean {
  const id = /^\/api\/sandbox\/loans\/([^/]+)\//.exec(path)?.[1]
  return id !== undefined && state.loanHistory.some((loan: any) => loan.id === decodeURIComponent(id))
}

/** Sends one write with a fresh Idempotency-Key (or `idem`) and checks it against the model. */
export async function sendWrite(walk: Walk, k: number, planned: PlannedRequest, options: { raw?: string; idem?: string } = {}): Promise<void> {
  const { client, models } = walk
  const model = models[k]!
  const raw = options.raw ?? (planned.body === undefined ? undefined : JSON.stringify(planned.body))
  const idem = planned.method === 'POST' ? options.idem ?? client.newIdem() : null
  const before = model.loans
  const allowed = options.raw === undefined && planned.body ? predictStatus(planned.path, planned.body, before) : undefined
  if (idem !== null) model.used.add(idem)
  const answer = await client.send(k, planned.method, planned.path, { raw, idem })
  if (allowed && !allowed.includes(answer.status)) client.fail(`k${k} ${planned.path} ${raw}: status ${answer.status} (${answer.body?.error_code} ${answer.body?.details?.reason ?? ''}), expected ${allowed.join('/')}: ${answer.text.slice(0, 300)}`)
  if (replayed(answer)) client.fail(`k${k}: a fresh Idempotency-Key ${idem} was answered as a replay`)
  if (idem !== null && isStored(answer)) model.stored.push({ path: planned.path, idem, raw: raw ?? '', status: answer.status, text: answer.text })
  if (idem !== null && answer.status === 400) model.rejected.push({ path: planned.path, idem })
  const body = parseLoose(raw)
  if (answer.status === 200) {
    if (isLoanPath(planned.path)) {
      const after = strip(answer.body)
      for (const problem of checkLoanState(after, walk.config(), INITIAL)) client.fail(`k${k} answer: ${problem}`)
      for (const problem of checkTransition(planned.path, body ?? {}, before, after, walk.config())) client.fail(`k${k} ${raw}: ${problem}`)
      model.loans = after
    }
    if (planned.path === '/api/sandbox/partner') model.profile = answer.body.profile
    if (planned.path === '/api/sandbox/webhooks' || planned.path.startsWith('/api/sandbox/webhooks/')) model.endpoint = stripSecret(answer.body.endpoint)
    if (planned.method === 'POST') model.events.push(...eventsOf(planned.path, body ?? {}, closedIn(planned.path, model.loans)))
  }
  await checkStateAgrees(walk, k, planned.path)
}

/** GET after a write agrees with what the answers said (and, after a refusal, with the state before). */
export async function checkStateAgrees(walk: Walk, k: number, path: string): Promise<void> {
  const { client, models } = walk
  const model = models[k]!
  if (isLoanPath(path)) {
    const got = strip((await client.send(k, 'GET', '/api/sandbox/loans')).body)
    if (!same(got, model.loans)) {
      client.fail(`k${k}: GET /loans differs from the last answer:\n  got      ${JSON.stringify(got).slice(0, 1500)}\n  expected ${JSON.stringify(model.loans).slice(0, 1500)}`)
      model.loans = got
    }
  } else if (path.startsWith('/api/sandbox/partner')) {
    const got = (await client.send(k, 'GET', '/api/sandbox/partner')).body
    if (!same(got.profile, model.profile)) client.fail(`k${k}: GET /partner profile ${JSON.stringify(got.profile)}, answers said ${JSON.stringify(model.profile)}`)
  } else if (path.startsWith('/api/sandbox/webhooks')) {
    const got = (await client.send(k, 'GET', '/api/sandbox/webhooks')).body
    checkDeliveryLog(walk, k, got)
    if (!same(got.endpoint, model.endpoint)) client.fail(`k${k}: GET /webhooks endpoint ${JSON.stringify(got.endpoint)}, answers said ${JSON.stringify(model.endpoint)}`)
  }
}

/** A plan of any write, used as the valid body that bad bodies derive from. */
export function planAnyWrite(walk: Walk, k: number): PlannedRequest {
  const { random, models } = walk
  const state = models[k]!.loans
  switch (random.int(0, 6)) {
    case 0: return planFlowStep(random, state, walk.config())
    case 1: return planCreateLoan(random, walk.config())
    case 2: return planRepaymentStep(random, state)
    case 3: return planDirectAction(random, state, walk.config())
    case 4: return planPartner(random)
    case 5: return { method: 'POST', path: '/api/sandbox/webhooks/retry', body: { delivery_id: 'whd_unknown' } }
    default: return { method: 'POST', path: '/api/sandbox/webhooks', body: { url: `${walk.base}/ep/${k}/ok` } }
  }
}

/** An invalid body derived from a valid one. */
export async function sendBad(walk: Walk, k: number): Promise<void> {
  const planned = planAnyWrite(walk, k)
  await sendWrite(walk, k, planned, { raw: makeBadBody(walk.random, planned.body ?? {}) })
}

/** Replays a stored outcome (same bytes, or the same JSON written otherwise), or reuses its key for another request. */
export async function replayStored(walk: Walk, k: number, conflict: boolean): Promise<void> {
  const { client, models, random } = walk
  const model = models[k]!
  if (model.stored.length === 0) return
  const call = random.pick(model.stored)
  if (!conflict) {
    const parsed = parseLoose(call.raw)
    const raw = random.chance(0.3) && parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? `{ ${Object.keys(parsed).reverse().map((key) => `${JSON.stringify(key)} : ${JSON.stringify(parsed[key])}`).join(' , ')} }`
      : call.raw
    const answer = await client.send(k, 'POST', call.path, { raw: raw === '' ? undefined : raw, idem: call.idem })
    if (answer.status !== call.status || !replayed(answer) || normalize(answer.text) !== normalize(call.text)) {
      client.fail(`k${k}: replay of ${call.idem} on ${call.path} answered ${answer.status} (replayed: ${replayed(answer)}):\n  first  ${normalize(call.text).slice(0, 2000)}\n  replay ${normalize(answer.text).slice(0, 2000)}`)
    }
  } else {
    const other = random.chance(0.5) ? call.path : random.pick(['/api/sandbox/loans', '/api/sandbox/partner', '/api/sandbox/loans/flow'].filter((p) => p !== call.path))
    const raw = other === call.path ? JSON.stringify({ ...(parseLoose(call.raw) ?? {}), fuzz_extra: random.int(0, 9) }) : call.raw
    const answer = await client.send(k, 'POST', other, { raw: raw === '' ? undefined : raw, idem: call.idem })
    if (answer.body?.error_code !== 'IDEMPOTENCY_KEY_CONFLICT') client.fail(`k${k}: reusing ${call.idem} for another request answered ${answer.status} ${answer.text.slice(0, 300)}`)
  }
  await checkStateAgrees(walk, k, '/api/sandbox/loans')
}

/** Sends a corrected request under a key that only saw a 400 (not stored, so usable again). */
export async function reuseRejected(walk: Walk, k: number): Promise<void> {
  const model = walk.models[k]!
  const rejected = model.rejected.pop()
  if (!rejected) return
  const planned = rejected.path === '/api/sandbox/partner' ? planPartner(walk.random) : planFlowStep(walk.random, model.loans, walk.config())
  if (planned.path !== rejected.path) return
  await sendWrite(walk, k, planned, { idem: rejected.idem })
}

/** Sends a webhook retry of a delivery the log shows, of an unknown one, or of every failed one. */
export async function sendRetry(walk: Walk, k: number): Promise<void> {
  const { client, random } = walk
  const log = (await client.send(k, 'GET', '/api/sandbox/webhooks')).body
  checkDeliveryLog(walk, k, log)
  const ids: string[] = (log.deliveries ?? []).map((delivery: any) => delivery.id)
  const choice = random.weighted({ one: 3, batch: 1, all: 1, unknown: 1 })
  const body: any = choice === 'one' && ids.length ? { delivery_id: random.pick(ids) }
    : choice === 'batch' && ids.length ? { delivery_ids: [random.pick(ids), random.pick(ids)] }
    : choice === 'unknown' ? { delivery_id: 'whd_nope' } : {}
  // Whatever the retry endpoint may put back may then arrive after later events: not an order fault.
  const putBack = (log.deliveries ?? []).filter((delivery: any) => delivery.status !== 'delivered' && (!('delivery_id' in body || 'delivery_ids' in body) || [body.delivery_id, ...(body.delivery_ids ?? [])].includes(delivery.id)))
  for (const delivery of putBack) walk.models[k]!.retried.add(delivery.event_id)
  await sendWrite(walk, k, { method: 'POST', path: '/api/sandbox/webhooks/retry', body })
}

/**
 * Sends another key's stored request, Idempotency-Key and all, on key `k`: the key's scope is
 * the API key, so it must run afresh here, and a loan id of the other key must be unknown.
 */
export async function sendOtherKeysRequest(walk: Walk, k: number): Promise<void> {
  const others = walk.models.flatMap((model, i) => (i === k ? [] : model.stored)).filter((call) => !walk.models[k]!.used.has(call.idem))
  if (others.length === 0) return
  const call = walk.random.pick(others)
  await sendWrite(walk, k, { method: 'POST', path: call.path }, { raw: call.raw === '' ? undefined : call.raw, idem: call.idem })
}
