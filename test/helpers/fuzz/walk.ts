import type { Storage } from 'unstorage'
import { createSandbox } from '../../../src/server/create-sandbox.js'
import { createSandboxStorage } from '../../../src/storage/create-storage.js'
import { listenTestApi } from '../api.js'
import { FuzzClient } from './fuzz-client.js'
import { createRandom, type Random } from './random.js'
import { planCreateLoan, planDirectAction, planFlowStep, planPartner, planRepaymentStep, planWebhookSave } from './steps.js'
import type { FullModelConfig } from './transitions.js'
import { replayStored, reuseRejected, sendBad, sendOtherKeysRequest, sendRetry, sendWrite } from './walk-actions.js'
import { checkAfterRestart, checkEvents, checkIsolation, checkReads, resync, sendConcurrent } from './walk-checks.js'
import { startWalkReceiver } from './walk-receiver.js'
import { checkEndpointOrder, checkRecovery } from './endpoint-checks.js'
import { flipReceiver, jumpClock, sendWithTrailingSlash } from './walk-edges.js'
import { installWallClock } from '../wall-clock.js'
import type { KeyModel, Walk } from './walk-types.js'

/**
 * A seeded random walk over the HTTP API: a few keys, each sent long sequences of flow steps in
 * and out of order, direct loans and actions, webhook and partner changes, invalid bodies,
 * replays, reused keys and concurrent requests, with restarts (new prices and LTV) between.
 * Every answer and the state after it are checked (fuzz-client.ts, walk-actions.ts).
 */

/** How a walk runs. */
export interface WalkOptions {
  seed: number
  steps: number
  keys?: number
  storage?: 'memory' | 'fs' | 'redis'
  /** fs: the data dir (a fresh temp dir). */
  dataDir?: string
  /** redis: the URL of an empty database the walk may use alone. */
  redisUrl?: string
  /** Restarts (each may change prices and LTV) spread over the walk. */
  restarts?: number
  /** `port`: over HTTP on 127.0.0.1 (Node's body reading), default in-process. */
  transport?: 'in-process' | 'port'
  /** Step the wall clock forward and back between requests (within two hours). */
  clockJumps?: boolean
}

/** What a walk found: problems (none when it passed) and the request sequence that led there. */
export interface WalkReport {
  problems: string[]
  trace: string
  requests: number
  /** Answers per method, status and replay. */
  counts: Record<string, number>
  /** Loans each key ended with (active + closed). */
  loans: number[]
}

const DEFAULT_CONFIG: FullModelConfig = { btcUsd: 95000, maxLtv: 50, feePercent: 1, fixedPercent: 12, interestMonths: 1 }

function drawConfig(random: Random): FullModelConfig {
  return {
    btcUsd: random.pick([95000, 60000, 120000, 95000.5, 33333.33]),
    maxLtv: random.pick([50, 30, 65, 49.99]),
    feePercent: random.pick([1, 0.5, 1.25, 0]),
    fixedPercent: random.pick([12, 7.5, 0]),
    interestMonths: random.pick([1, 3]),
  }
}

/** Runs one seeded walk; a finding is reported, never thrown. */
export async function runWalk(options: WalkOptions): Promise<WalkReport> {
  const random = createRandom(options.seed)
  const keyCount = options.keys ?? 3
  const keys = Array.from({ length: keyCount }, (_, i) => `sk_sandbox_fuzz_${options.seed}_${i}_0000000000`)
  const client = new FuzzClient(keys)
  const receiver = await startWalkReceiver()
  let config = DEFAULT_CONFIG
  const memory: Storage | undefined = options.storage === 'fs' || options.storage === 'redis' ? undefined : await createSandboxStorage({ kind: 'memory' })
  const stored = options.storage === 'redis' ? options.redisUrl as `redis://${string}` : 'fs'
  const open = async () => {
    client.sandbox = await createSandbox({
      // A restart on memory storage keeps its contents: the old server's close must not dispose it.
      storage: memory ? { ...memory, dispose: async () => {} } : stored,
      dataDir: options.dataDir,
      rateLimit: false,
      logError: (error) => client.fail(`server logged: ${(error as Error)?.stack ?? String(error)}`),
      allowLocalWebhooks: true,
      webhookForwardTo: `${receiver.base}/fwd`,
      webhookRetrySchedule: [20, 40],
      // Nothing may leave the machine: every host name is unknown.
      resolveHost: async () => { throw Object.assign(new Error('no DNS in the fuzzer'), { code: 'ENOTFOUND' }) },
      config: {
        rates: { btc_usd: config.btcUsd },
        risk: { max_ltv_percent: config.maxLtv },
        fees: { loan_origination_percent: config.feePercent },
        borrow_rates: { fixed: config.fixedPercent },
        terms: { interest_payment_months: config.interestMonths },
      },
    })
  }
  let listener: Awaited<ReturnType<typeof listenTestApi>> | undefined
  const listen = async () => {
    if (options.transport !== 'port') return
    listener = await listenTestApi(client.sandbox)
    client.baseUrl = listener.url
  }
  const stop = async () => {
    await listener?.close()
    await client.sandbox.close()
  }
  await open()
  await listen()
  const models: KeyModel[] = keys.map(() => ({ loans: null, profile: null, endpoint: null, stored: [], rejected: [], events: [], used: new Set<string>(), delivered: new Set<string>(), retried: new Set<string>() }))
  const walk: Walk = { random, client, models, config: () => config, base: receiver.base, down: receiver.down }
  const clock = options.clockJumps ? installWallClock() : undefined
  const offset = { ms: 0 }
  try {
    for (let k = 0; k < keyCount; k++) await resync(walk, k)
    const restarts = options.restarts ?? 0
    const restartAt = new Set(Array.from({ length: restarts }, (_, i) => Math.floor(((i + 1) * options.steps) / (restarts + 1))))
    for (let step = 0; step < options.steps && client.problems.length === 0; step++) {
      if (restartAt.has(step)) {
        await stop()
        if (random.chance(0.6)) config = drawConfig(random)
        client.sent.push({ n: client.sent.length, key: -1, method: 'RESTART', path: JSON.stringify(config) })
        await open()
        await listen()
        await checkAfterRestart(walk)
        continue
      }
      if (clock && random.chance(0.03)) jumpClock(walk, clock, offset)
      await takeStep(walk, random.int(0, keyCount - 1))
      if (step % 25 === 24) await checkIsolation(walk)
    }
    if (client.problems.length === 0) await checkIsolation(walk)
    if (client.problems.length === 0) await checkRecovery(walk)
    if (client.problems.length === 0) checkEndpointOrder(walk, receiver.got, await checkEvents(walk, receiver.got))
    for (const problem of receiver.contractProblems.slice(0, 3)) client.fail(problem)
  } catch (error) {
    client.fail(`walk threw: ${(error as Error).stack}`)
  } finally {
    clock?.restore()
    await stop()
    await receiver.close()
  }
  return { problems: client.problems, trace: client.formatSent(), requests: client.sent.length, counts: client.counts, loans: models.map((m) => (m.loans ? m.loans.activeLoans.length + m.loans.loanHistory.length : 0)) }
}

async function takeStep(walk: Walk, k: number): Promise<void> {
  const { random, models } = walk
  const model = models[k]!
  const config = walk.config()
  const kind = random.weighted({ flow: 20, create: 5, repay: 18, action: 14, partner: 3, hookSave: 3, hookDelete: 1, hookTest: 2, hookRetry: 2, flip: 3, pause: 2, slash: 2, bad: 12, replay: 6, conflict: 3, reuse400: 2, otherKey: 2, concurrent: 3, read: 3, stray: 1 })
  switch (kind) {
    case 'flow': return sendWrite(walk, k, planFlowStep(random, model.loans, config))
    case 'create': return sendWrite(walk, k, planCreateLoan(random, config))
    case 'repay': return sendWrite(walk, k, planRepaymentStep(random, model.loans))
    case 'action': return sendWrite(walk, k, planDirectAction(random, model.loans, config))
    case 'partner': return sendWrite(walk, k, planPartner(random))
    case 'hookSave': return sendWrite(walk, k, planWebhookSave(random, walk.base, k))
    case 'hookDelete': return sendWrite(walk, k, { method: 'DELETE', path: '/api/sandbox/webhooks' })
    case 'hookTest': return sendWrite(walk, k, { method: 'POST', path: '/api/sandbox/webhooks/test', body: {} })
    case 'hookRetry': return sendRetry(walk, k)
    case 'flip': return flipReceiver(walk, k)
    case 'slash': return sendWithTrailingSlash(walk, k)
    // Lets scheduled webhook retries (20 and 40 ms) happen between requests, so queues fail and move.
    case 'pause': return new Promise((resolve) => setTimeout(resolve, random.int(20, 120)))
    case 'bad': return sendBad(walk, k)
    case 'replay': return replayStored(walk, k, false)
    case 'conflict': return replayStored(walk, k, true)
    case 'reuse400': return reuseRejected(walk, k)
    case 'otherKey': return sendOtherKeysRequest(walk, k)
    case 'concurrent': return sendConcurrent(walk, k)
    case 'read': return checkReads(walk, k)
    case 'stray': {
      const [method, path] = random.pick([['PUT', '/api/sandbox/loans'], ['GET', '/api/sandbox/nope'], ['GET', '/api/sandbox/loans/x/action'], ['DELETE', '/api/sandbox/partner']] as const)
      await walk.client.send(k, method, path)
    }
  }
}
