import { isDeepStrictEqual } from 'node:util'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import levels from '../../fixtures/partner-levels.json' with { type: 'json' }
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { compareLoanState, comparePartner } from '../helpers/math-oracle/compare.js'
import { readExactConfig } from '../helpers/math-oracle/formulas.js'
import { generateRequest } from '../helpers/math-oracle/generate.js'
import type { Model } from '../helpers/math-oracle/model.js'
import { createRandom } from '../unit/property-random.js'

// Random, seeded walks through the API in-process, each request's outcome and every figure of
// every answer predicted by an oracle written from the spec and decisions.md in exact integer
// units (test/helpers/math-oracle): amounts, LTV, fees, interest, wallet, histories, the
// application's calculation, repayment amounts, refusal codes and limit details, the events each
// step sends (compared with the answer's objects), and the partner block's levels, rewards and
// deals. A failure names the seed and the steps; set ORACLE_SEEDS=1-500 to hunt.

const CONFIGS = [
  {},
  {
    rates: { btc_usd: 123_456.78 },
    borrow_rates: { fixed: 9.99 },
    risk: { max_ltv_percent: 70 },
    terms: { interest_payment_months: 3 },
    fees: { loan_origination_percent: 2.5 },
  },
  {
    rates: { btc_usd: 1_000_000 },
    risk: { max_ltv_percent: 33.33 },
    fees: { loan_origination_percent: 1.234 },
    borrow_rates: { fixed: 17.77 },
    limits: { collateral_btc: { min: 0.00012345, max: 1.5 }, loan_amount: { min: 0.01, max: 600_000 } },
  },
]

const STEPS = 60

function seedsFromEnv(): number[] {
  const text = process.env.ORACLE_SEEDS
  if (!text) return Array.from({ length: 15 }, (_, i) => i + 1)
  const [from, to] = text.split('-').map(Number) as [number, number | undefined]
  return Array.from({ length: (to ?? from) - from + 1 }, (_, i) => from + i)
}

/** Outcomes by request kind, printed with ORACLE_VERBOSE=1 to see that the walk reaches every edge. */
const tally = new Map<string, number>()

interface Sent {
  type: string
  object: unknown
}

async function walk(api: TestApi, receiver: TestReceiver, seed: number): Promise<string[]> {
  const random = createRandom(seed)
  const key = newKey(`oracle${seed}`)
  const config = (await api.get('/api/sandbox/config', key)).body
  const start = (await api.get('/api/sandbox/loans', key)).body
  const model: Model = { config: readExactConfig(config, levels), btc: BigInt(Math.round(start.wallet.BTC * 1e8)), usdt: BigInt(Math.round(start.wallet.USDT * 100)), loans: [], apps: [], draftId: null, ops: [], accruals: [] }
  const trace: string[] = []
  const expected: Sent[] = []
  const fail = (problems: string[]) => [`seed ${seed} step ${trace.length - 1}: ${problems.join('; ')}`, ...trace.map((line, i) => `  ${i}: ${line}`)]
  await api.sandbox.deliveriesIdle()
  const received = receiver.received.length
  let last: { path: string; body: Record<string, unknown>; idem: string; answer: unknown } | undefined
  for (let step = 0; step < STEPS; step++) {
    if (last && random.chance(0.05)) {
      // A retry with the same Idempotency-Key changes nothing and answers the same.
      const replay = await api.post(last.path, last.body, { key, idempotencyKey: last.idem })
      const { request_id: _r, idempotency_replayed: flag, ...rest } = replay.body
      const { request_id: _s, idempotency_replayed: _f, ...first } = last.answer as Record<string, unknown>
      if (flag !== true || !isDeepStrictEqual(rest, first)) return fail([`replay of ${last.path} differs`])
    }
    const request = generateRequest(random, model)
    const idem = randomUUID()
    const answer = await api.post(request.path, request.body, { key, idempotencyKey: idem })
    const { outcome } = request
    const kind = `${request.path.split('/').at(-1)}:${String(request.body.action ?? 'create')} ${answer.status} ${answer.body.error_code ?? ''} ${answer.body.details?.reason ?? answer.body.details?.limit ?? ''}`
    tally.set(kind, (tally.get(kind) ?? 0) + 1)
    trace.push(`${request.path} ${JSON.stringify(request.body)} -> ${answer.status} ${answer.body.error_code ?? ''} ${JSON.stringify(answer.body.details ?? '')}`)
    if (!outcome.ok) {
      const problems: string[] = []
      if (answer.status !== outcome.status || answer.body.error_code !== outcome.code) problems.push(`expected ${outcome.status} ${outcome.code} ${JSON.stringify(outcome.details ?? {})}`)
      for (const [field, value] of Object.entries(outcome.details ?? {})) {
        if (!isDeepStrictEqual(answer.body.details?.[field], value)) problems.push(`details.${field} ${JSON.stringify(answer.body.details?.[field])}, expected ${JSON.stringify(value)}`)
      }
      if (problems.length > 0) return fail(problems)
      continue
    }
    if (answer.status !== 200) return fail([`expected 200`])
    const events = outcome.apply(model, answer.body)
    for (const event of events) expected.push({ type: event.type, object: event.pick(answer.body) })
    const problems = compareLoanState(model, answer.body)
    if (problems.length > 0) return fail(problems)
    last = { path: request.path, body: request.body, idem, answer: answer.body }
    if (step % 10 === 9 || step === STEPS - 1) {
      const state = (await api.get('/api/sandbox/state', key)).body
      const partner = (await api.get('/api/sandbox/partner', key)).body
      const loans = (await api.get('/api/sandbox/loans', key)).body
      const { request_id: _a, idempotency_replayed: _b, ...posted } = answer.body
      const { request_id: _c, ...listed } = loans
      const { request_id: _d, ...partnerBlock } = partner
      const found = [...compareLoanState(model, state.loans), ...comparePartner(model, partner)]
      if (!isDeepStrictEqual(state.loans, posted) || !isDeepStrictEqual(listed, posted)) found.push('GET state / GET loans differ from the last POST answer')
      if (!isDeepStrictEqual(state.partner, partnerBlock)) found.push('GET state partner differs from GET partner')
      if (found.length > 0) return fail(found)
    }
  }
  await api.sandbox.deliveriesIdle()
  const got = receiver.received.slice(received).map((item) => JSON.parse(item.body) as { type: string; data: { object: unknown } })
  const text = (list: Sent[]) => list.map((e) => JSON.stringify([e.type, e.object])).sort()
  const sent = text(got.map((e) => ({ type: e.type, object: e.data.object })))
  if (!isDeepStrictEqual(sent, text(expected))) return fail([`events: got ${got.length} (${got.map((e) => e.type).join(',')}), expected ${expected.length} (${expected.map((e) => e.type).join(',')})`])
  return []
}

describe.each(CONFIGS.map((config, index) => [index, config] as const))('loan math oracle, config %i', (index, config) => {
  let api: TestApi
  let receiver: TestReceiver
  beforeAll(async () => {
    receiver = await startReceiver()
    api = await createTestApi({ config, webhookForwardTo: receiver.url })
  })
  afterAll(async () => {
    await api.sandbox.close()
    await receiver.close()
  })
  it('every answer, event and partner figure agrees with the exact oracle', async () => {
    const failures: string[][] = []
    for (const seed of seedsFromEnv().filter((s) => s % CONFIGS.length === index)) {
      const failure = await walk(api, receiver, seed)
      if (failure.length > 0) failures.push(failure)
    }
    if (failures.length > 1) console.log(failures.map((failure) => failure[0]).join('\n'))
    expect(failures[0] ?? []).toEqual([])
    if (process.env.ORACLE_VERBOSE) console.log([...tally].sort().map(([k, n]) => `${n}\t${k}`).join('\n'))
  })
})
