import { compareEvents, eventsOf, objectIdOf } from './event-log.js'
import type { FuzzAnswer } from './fuzz-client.js'
import { checkLoanState } from './money-checks.js'
import { isStored, planAnyWrite } from './walk-actions.js'
import type { WalkDelivery } from './walk-receiver.js'
import { INITIAL, normalize, parseLoose, same, strip, type Walk } from './walk-types.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Reads a key's state afresh and checks it; the model takes it as known. */
export async function resync(walk: Walk, k: number): Promise<void> {
  const { client } = walk
  const model = walk.models[k]!
  model.loans = strip((await client.send(k, 'GET', '/api/sandbox/loans')).body)
  model.profile = (await client.send(k, 'GET', '/api/sandbox/partner')).body.profile
  model.endpoint = (await client.send(k, 'GET', '/api/sandbox/webhooks')).body.endpoint
  for (const problem of checkLoanState(model.loans, walk.config(), INITIAL)) client.fail(`k${k} state: ${problem}`)
}

/** GET state is GET loans plus GET partner, and both agree with the model. */
export async function checkReads(walk: Walk, k: number): Promise<void> {
  const { client } = walk
  const model = walk.models[k]!
  const state = (await client.send(k, 'GET', '/api/sandbox/state')).body
  const partner = strip((await client.send(k, 'GET', '/api/sandbox/partner')).body)
  if (!same(strip(state.loans), model.loans)) client.fail(`k${k}: GET /state loans differ from the model`)
  if (!same(state.partner, partner)) client.fail(`k${k}: GET /state partner differs from GET /partner`)
  await client.send(k, 'GET', '/api/sandbox/config')
}

/** No key's state moved except through its own requests. */
export async function checkIsolation(walk: Walk): Promise<void> {
  const { client } = walk
  for (let k = 0; k < walk.models.length; k++) {
    const model = walk.models[k]!
    const loans = strip((await client.send(k, 'GET', '/api/sandbox/loans')).body)
    const profile = (await client.send(k, 'GET', '/api/sandbox/partner')).body.profile
    const endpoint = (await client.send(k, 'GET', '/api/sandbox/webhooks')).body.endpoint
    if (!same(loans, model.loans)) client.fail(`k${k}: loan state changed without a request of its own`)
    if (!same(profile, model.profile)) client.fail(`k${k}: partner profile changed without a request of its own`)
    if (!same(endpoint, model.endpoint)) client.fail(`k${k}: webhook endpoint changed without a request of its own`)
  }
}

/** After a restart (maybe at other prices): the same state, LTVs at the new price, replays the same bytes. */
export async function checkAfterRestart(walk: Walk): Promise<void> {
  const { client, random } = walk
  for (let k = 0; k < walk.models.length; k++) {
    const model = walk.models[k]!
    const got = strip((await client.send(k, 'GET', '/api/sandbox/loans')).body)
    const withoutLtv = (state: any) => ({ ...state, activeLoans: state.activeLoans.map((loan: any) => ({ ...loan, ltv: 0 })) })
    if (!same(withoutLtv(got), withoutLtv(model.loans))) client.fail(`k${k}: the loan state changed across the restart:\n  got    ${JSON.stringify(got).slice(0, 1500)}\n  before ${JSON.stringify(model.loans).slice(0, 1500)}`)
    for (const problem of checkLoanState(got, walk.config(), INITIAL)) client.fail(`k${k} after restart: ${problem}`)
    model.loans = got
    const profile = (await client.send(k, 'GET', '/api/sandbox/partner')).body.profile
    if (!same(profile, model.profile)) client.fail(`k${k}: the partner profile changed across the restart`)
    for (let i = 0; i < 3 && model.stored.length; i++) {
      const call = random.pick(model.stored)
      const answer = await client.send(k, 'POST', call.path, { raw: call.raw === '' ? undefined : call.raw, idem: call.idem })
      if (normalize(answer.text) !== normalize(call.text)) client.fail(`k${k}: replay of ${call.idem} after the restart differs:\n  first  ${normalize(call.text).slice(0, 2000)}\n  replay ${normalize(answer.text).slice(0, 2000)}`)
    }
  }
}

/** 2 to 4 requests at once on one key: some share an Idempotency-Key and body, some are different steps. */
export async function sendConcurrent(walk: Walk, k: number): Promise<void> {
  const { client, random } = walk
  const model = walk.models[k]!
  const plans = Array.from({ length: random.int(1, 3) }, () => planAnyWrite(walk, k)).filter((plan) => plan.path !== '/api/sandbox/webhooks')
  const calls = plans.map((plan) => ({ plan, idem: client.newIdem(), raw: JSON.stringify(plan.body ?? {}) }))
  if (calls.length === 0) return
  calls.push({ ...calls[0]! })
  for (const call of calls) model.used.add(call.idem)
  const answers: FuzzAnswer[] = await Promise.all(calls.map((call) => client.send(k, 'POST', call.plan.path, { raw: call.raw, idem: call.idem })))
  const fresh: Array<{ path: string; raw: string; answer: FuzzAnswer }> = []
  const byIdem = new Map<string, FuzzAnswer[]>()
  calls.forEach((call, i) => byIdem.set(call.idem, [...(byIdem.get(call.idem) ?? []), answers[i]!]))
  for (const [idem, group] of byIdem) {
    const call = calls.find((c) => c.idem === idem)!
    // A path the router does not know is answered before any Idempotency-Key is looked at.
    if (group.some((a) => a.body?.error_code === 'NOT_FOUND')) continue
    // A 400 is not stored, so a second request under its key runs again (and answers 400 again).
    const first = group.filter((a) => a.headers.get('idempotent-replayed') !== 'true' && a.body?.error_code !== 'IDEMPOTENCY_KEY_IN_PROGRESS' && (isStored(a) || a === group.find((b) => !isStored(b) && b.body?.error_code !== 'IDEMPOTENCY_KEY_IN_PROGRESS')))
    if (first.length !== 1) client.fail(`k${k}: ${group.length} concurrent requests under ${idem} ran ${first.length} times (statuses ${group.map((a) => a.status).join(',')})`)
    for (const other of group) {
      if (other !== first[0] && other.body?.error_code !== 'IDEMPOTENCY_KEY_IN_PROGRESS' && first[0] && normalize(other.text) !== normalize(first[0].text)) client.fail(`k${k}: concurrent replay of ${idem} differs from the first answer`)
    }
    if (first[0]) {
      fresh.push({ path: call.plan.path, raw: call.raw, answer: first[0] })
      if (isStored(first[0])) model.stored.push({ path: call.plan.path, idem, raw: call.raw, status: first[0].status, text: first[0].text })
    }
  }
  const before = model.loans
  await resync(walk, k)
  const loanAnswers = fresh.filter((f) => f.answer.status === 200 && f.path.startsWith('/api/sandbox/loans')).map((f) => strip(f.answer.body))
  if (loanAnswers.length && !loanAnswers.some((state) => same(state, model.loans))) client.fail(`k${k}: after concurrent requests, GET /loans is none of the answered states`)
  if (!loanAnswers.length && !same(before, model.loans)) client.fail(`k${k}: concurrent requests that all failed changed the loan state`)
  const group = fresh.filter((f) => f.answer.status === 200).flatMap((f) => eventsOf(f.path, parseLoose(f.raw) ?? {}, /\/action$/.test(f.path) && model.loans.loanHistory.some((loan: any) => f.path.includes(`/${loan.id}/`))))
  if (group.length) model.events.push(group)
}

/** Every key's forwarded events arrived once each, in the order its answers imply; answers which key owns each object id. */
export async function checkEvents(walk: Walk, got: WalkDelivery[]): Promise<Map<string, number>> {
  const { client } = walk
  await client.sandbox.deliveriesIdle()
  const owner = new Map<string, number>()
  for (let k = 0; k < walk.models.length; k++) {
    const model = walk.models[k]!
    const { loans } = model
    for (const item of [...loans.activeLoans, ...loans.loanHistory, ...loans.sandboxFlow.loanApplications]) owner.set(item.id, k)
    for (const op of loans.sandboxFlow.repaymentOperations) owner.set(op.operation_id, k)
    if (model.profile) owner.set(model.profile.id, k)
    if (model.endpoint) owner.set(model.endpoint.id, k)
  }
  const forwarded = got.filter((delivery) => delivery.path === '/fwd').map((delivery) => delivery.event as any)
  const ids = forwarded.map((event) => event?.id)
  if (new Set(ids).size !== ids.length) client.fail(`an event was forwarded twice: ${ids.filter((id, i) => ids.indexOf(id) !== i).slice(0, 3).join(', ')}`)
  for (let k = 0; k < walk.models.length; k++) {
    const types = forwarded.filter((event) => owner.get(objectIdOf(event) ?? '') === k).map((event) => event.type)
    for (const problem of compareEvents(`k${k}`, walk.models[k]!.events, types)) client.fail(problem)
  }
  const orphans = forwarded.filter((event) => !owner.has(objectIdOf(event) ?? ''))
  if (orphans.length) client.fail(`${orphans.length} forwarded events belong to no key: ${JSON.stringify(orphans[0]).slice(0, 300)}`)
  return owner
}

