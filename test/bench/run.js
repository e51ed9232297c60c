// `npm run bench`: throughput and latency of the sandbox beside raw node:http, measured in one run
// on loopback. A report, not a test: it always exits 0 and marks missed targets.
import { spawn, spawnSync } from 'node:child_process'
import { createServer as createNetServer } from 'node:net'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { runPacedLoad } from './paced-load.js'
import { measureDeliveryLatency, startTimingReceiver } from './webhook-latency.js'

const ROOT = new URL('../..', import.meta.url).pathname
const BIN = join(ROOT, 'bin/sandbox.js')
const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const CONNECTIONS = 50
const children = new Set()

function cleanup() {
  for (const child of children) child.kill('SIGKILL')
}
process.on('exit', cleanup)
process.on('SIGINT', () => process.exit(130))

/** Spawns a server process and resolves with its base URL once it prints it. */
function startProcess(args, pattern) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NO_COLOR: '1' } })
  children.add(child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = pattern.exec(out)
      if (match) resolve({ url: match[1], child })
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)))
  })
}

function startSandbox(storage, dataDir, extra = []) {
  const args = [BIN, 'serve', '--port', '0', '--quiet', '--rate-limit', 'off', '--storage', storage, ...extra]
  if (dataDir) args.push('--data-dir', dataDir)
  return startProcess(args, /sandbox ready: (\S+)/)
}

/** A loopback port nobody listens on (the moment after this resolves). */
function findFreePort() {
  return new Promise((resolve) => { const probe = createNetServer().listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)) }) })
}

/**
 * A redis-server of the bench's own on a free loopback port, with redis's default snapshots
 * (into a temp dir): what `--storage redis://` meets on a developer's machine. Undefined when
 * redis-server is not installed.
 */
async function startRedis() {
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined
  const port = await findFreePort()
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-bench-redis-'))
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(child)
  await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)))
  })
  child.stdout.resume()
  return { url: `redis://127.0.0.1:${port}/0`, child, dir }
}

async function stop(server) {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
  children.delete(server.child)
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024
}

const SETTLE_MS = 10_000

/**
 * RSS once the server has been idle for SETTLE_MS: what it keeps after the run. Read at the last
 * response, RSS also counts the garbage of the load that V8 has not collected yet.
 */
async function settledRssMb(pid) {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
  return Math.round(rssMb(pid))
}

async function load(name, options) {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...options })
  const figures = {
    name,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
    // autocannon stops at its next sample tick, so a run of 2.5 s lasts ~3 s.
    duration_s: result.duration,
  }
  console.log(`  ${name.padEnd(34)} ${String(figures.requests_per_s).padStart(7)} req/s  p50 ${figures.p50_ms} ms  p99 ${figures.p99_ms} ms  non-2xx ${figures.non_2xx}  errors ${figures.errors}`)
  return figures
}

const benchKey = (conn, n = 0) => `sk_sandbox_bench_${conn}_${n}_${RUN_ID}`
const RUN_ID = randomUUID().slice(0, 8)

function getConfig(url, name = 'GET config', duration = DURATION) {
  return load(name, { url: `${url}/api/sandbox/config`, headers: { authorization: `Bearer ${benchKey(0)}` }, duration })
}

/**
 * GET loans over 50 keys that each hold a loan, in turn. Not a key per connection: autocannon
 * starts a new context for each run of a one-request list, so every GET had a fresh key with no
 * document (until 2026-11-26), and measured the answer for a key never written.
 */
async function getLoans(url) {
  const keys = Array.from({ length: CONNECTIONS }, (_, i) => benchKey(`loans_${i}`))
  for (const key of keys) {
    const answer = await fetch(`${url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ collateral_btc: 0.5, loan_amount: 20000 }),
    })
    if (answer.status !== 200) throw new Error(`a loan for GET loans: ${answer.status} ${await answer.text()}`)
  }
  let next = 0
  return load('GET loans (50 keys with a loan)', {
    url,
    requests: [{
      method: 'GET',
      path: '/api/sandbox/loans',
      setupRequest(request) {
        return { ...request, headers: { ...request.headers, authorization: `Bearer ${keys[next++ % keys.length]}` } }
      },
    }],
  })
}

/** The 4-step loan flow's bodies, walked by the saturating and the paced loads alike. */
const FLOW_STEPS = [
  { action: 'start_collateral_transfer', collateral_btc: 0.01, loan_amount: 200 },
  { action: 'confirm_btc', tx_hash: 'bench', confirmations: 6 },
  { action: 'run_kyt' },
  { action: 'complete_payout' },
]

/**
 * Each connection walks the 4-step loan flow and moves to a fresh key after every issued loan, so
 * 50 keys are active at a time and every POST carries a new Idempotency-Key.
 */
let flowRuns = 0

function loanFlows(url, name, extra = {}) {
  let nextConn = 0
  // Keys of their own per run: a run cut off mid-flow must not leave the next one a key mid-flow.
  const run = ++flowRuns
  const step = (body, first = false) => ({
    method: 'POST',
    path: '/api/sandbox/loans/flow',
    setupRequest(request, context) {
      context.conn ??= nextConn++
      if (first) context.flow = (context.flow ?? -1) + 1
      return {
        ...request,
        headers: {
          authorization: `Bearer ${benchKey(`${run}_${context.conn}`, context.flow)}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify(body),
      }
    },
  })
  return load(name, {
    url,
    ...extra,
    requests: FLOW_STEPS.map((body, i) => step(body, i === 0)),
  })
}

/** Paced loads started so far: each gets keys of its own. */
let pacedRuns = 0

/** The same flows, offered at a steady `rate` rather than as fast as the server answers. */
async function pacedFlows(url, name, rate, durationSeconds = DURATION) {
  const workers = Array.from({ length: CONNECTIONS }, () => ({ step: 0, flow: 0 }))
  // Fresh keys per call: a second paced load on one server must not walk flows the first left open.
  const run = `${RUN_ID}_${pacedRuns++}`
  const figures = await runPacedLoad({
    url,
    rate,
    durationSeconds,
    connections: CONNECTIONS,
    nextRequest(worker) {
      const state = workers[worker]
      const body = FLOW_STEPS[state.step]
      const key = `sk_sandbox_paced_${worker}_${state.flow}_${run}`
      state.step = (state.step + 1) % FLOW_STEPS.length
      if (state.step === 0) state.flow++
      return {
        method: 'POST',
        path: '/api/sandbox/loans/flow',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      }
    },
  })
  console.log(`  ${name.padEnd(34)} ${String(figures.requests_per_s).padStart(7)} req/s  p50 ${figures.p50_ms} ms  p99 ${figures.p99_ms} ms  non-2xx ${figures.non_2xx}  errors ${figures.errors}  client CPU ${figures.client_cpu_share} of a core`)
  return { name, ...figures }
}

function medianMs(args) {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { stdio: 'ignore' })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

function startupRatio(runs = 21) {
  const help = []
  const bare = []
  for (let i = 0; i < runs; i++) {
    bare.push(medianMs(['-e', '0']))
    help.push(medianMs([BIN, '--help']))
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  return { help_ms: median(help), node_ms: median(bare) }
}

/** `sandbox run` over every shipped scenario: against a running serve, and with its own server. */
async function scenarioRun() {
  const server = await startSandbox('memory', undefined, ['--allow-local-webhooks'])
  const started = process.hrtime.bigint()
  const result = spawnSync(process.execPath, [BIN, 'run', '--json', '--base-url', server.url], { encoding: 'utf8' })
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6
  await stop(server)
  const report = JSON.parse(result.stdout)
  const ownStart = process.hrtime.bigint()
  const own = spawnSync(process.execPath, [BIN, 'run', '--json'], { encoding: 'utf8' })
  const ownMs = Number(process.hrtime.bigint() - ownStart) / 1e6
  if (own.status !== 0) throw new Error(`sandbox run exited ${own.status}: ${own.stderr}`)
  return {
    wall_ms: Math.round(wallMs),
    in_process_wall_ms: Math.round(ownMs),
    requests: report.requests,
    requests_per_s: Math.round(report.requests / (wallMs / 1000)),
    passed: report.passed,
    failed: report.failed,
  }
}

// Exact: targets are checked on this, and only the printed figure is rounded (0.899 is not 0.9x).
const ratio = (a, b) => a / b

/** A figure as printed: numbers to three decimals at most. */
const showFigure = (value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value)

/** Figures of several turns of one load as one: requests over time, the worst p99. */
function combineTurns(name, turns) {
  const total = turns.reduce((sum, turn) => sum + turn.total, 0)
  const seconds = turns.reduce((sum, turn) => sum + turn.duration_s, 0)
  return {
    name,
    requests_per_s: Math.round(total / seconds),
    p50_ms: Math.max(...turns.map((turn) => turn.p50_ms)),
    p99_ms: Math.max(...turns.map((turn) => turn.p99_ms)),
    non_2xx: turns.reduce((sum, turn) => sum + turn.non_2xx, 0),
    errors: turns.reduce((sum, turn) => sum + turn.errors, 0),
    total,
    turns: turns.map((turn) => Math.round(turn.total / turn.duration_s)),
  }
}

/**
 * Who takes each measured turn of a comparison of servers `a` and `b`: each four times, in an
 * order whose mean position is the same for both (a steady drift of the machine falls on both
 * alike) and in which each takes two turns in a row once (the first turn after a stop pays for
 * the work that waited, the dead server's retries included).
 */
const TURN_ORDER = ['a', 'b', 'b', 'a', 'b', 'a', 'a', 'b']

/**
 * The same load on two running servers (`servers` has two entries, a then b): a warm-up of a full
 * run duration each, then turns of half the run duration in TURN_ORDER; each figure is over its
 * server's four turns. Measured one after the other, a ratio took the machine's drift with it: on
 * a shared 2-core VM, raw node:http alone gave 9,552-16,498 req/s in six runs of one evening.
 *
 * The server not taking a turn is stopped (SIGSTOP) until its next one, so that its background
 * work (the dead receiver's retries, 5 s after each first try, idle-time collections) runs in
 * its own turns and not in the other's: left running, the dead server's retries took 30-45% of a
 * core during the no-webhook server's turns, and the ratio looked 0.93 when it was 0.62.
 *
 * Two identical servers compared this way (by a copy of this function outside the repository)
 * gave 0.93-1.02 (six runs); with four turns of a full duration in the order A B A B, 0.95-1.13
 * (six runs).
 */
async function compareInTurns(servers, labels, runLoad) {
  const [a, b] = Object.keys(servers)
  const turnOf = (name, label, duration) => {
    for (const [other, server] of Object.entries(servers)) if (other !== name) server.child.kill('SIGSTOP')
    servers[name].child.kill('SIGCONT')
    return runLoad(servers[name].url, label, duration)
  }
  await turnOf(a, `warm-up, ${labels[a]}`, DURATION)
  await turnOf(b, `warm-up, ${labels[b]}`, DURATION)
  const turns = { [a]: [], [b]: [] }
  for (const [i, which] of TURN_ORDER.entries()) {
    const name = which === 'a' ? a : b
    turns[name].push(await turnOf(name, `${labels[name]}, turn ${i + 1}`, DURATION / 2))
  }
  for (const server of Object.values(servers)) server.child.kill('SIGCONT')
  const figures = { [a]: combineTurns(labels[a], turns[a]), [b]: combineTurns(labels[b], turns[b]) }
  for (const run of Object.values(figures)) console.log(`  ${run.name.padEnd(34)} ${String(run.requests_per_s).padStart(7)} req/s over its turns, p99 ${run.p99_ms} ms`)
  return figures
}

/**
 * The loan-flow load on a server without webhooks and on one forwarding every event of every key
 * to a port nobody listens on, both fresh, in turns (compareInTurns).
 */
async function compareDeadReceiver() {
  const deadPort = await findFreePort()
  const servers = {
    none: await startSandbox('memory'),
    dead: await startSandbox('memory', undefined, ['--webhook-forward-to', `http://127.0.0.1:${deadPort}/gone`]),
  }
  const labels = { none: 'loan flow POSTs, no webhooks', dead: 'loan flow POSTs, receiver dead' }
  const figures = await compareInTurns(servers, labels, (url, label, duration) => loanFlows(url, label, { duration }))
  await stop(servers.none)
  await stop(servers.dead)
  return figures
}

/**
 * The paced dead-receiver comparison offers this share of the no-webhook saturation rate measured
 * just before it in the same run: the same load relative to the machine on a fast host and a slow
 * one. A fixed 3,000/s was half of saturation on the development machine's fast days and three
 * quarters on its slow ones, where the p99 became the queue of a nearly saturated server.
 */
const PACED_DEAD_SHARE = 0.5
/** Long enough for the 5 s retries of two thirds of the run. */
const PACED_DEAD_SECONDS = 15

/** The paced comparison's rate: PACED_DEAD_SHARE of `noWebhooksPerSecond`, to the nearest 100/s. */
function pacedDeadRate(noWebhooksPerSecond) {
  return Math.max(100, Math.round((noWebhooksPerSecond * PACED_DEAD_SHARE) / 100) * 100)
}

/**
 * The loan flow offered at a steady rate well under saturation, on a fresh server without webhooks
 * and then on one forwarding every event to a port nobody listens on: whether a dead receiver
 * makes the API drop requests or answer later when it is not saturated. Each first takes 3 s of
 * the same load unmeasured: a cold server's first second (compiling its code) held answers for
 * 100-270 ms, more with the delivery code to compile too, which is start-up, not the receiver.
 */
async function comparePacedDeadReceiver(rate) {
  const deadPort = await findFreePort()
  const figures = {}
  for (const [name, args] of [['none', []], ['dead', ['--webhook-forward-to', `http://127.0.0.1:${deadPort}/gone`]]]) {
    const server = await startSandbox('memory', undefined, args)
    const label = `loan flow POSTs paced at ${rate}/s, ${name === 'none' ? 'no webhooks' : 'receiver dead'}`
    await pacedFlows(server.url, `warm-up, ${label}`, rate, 3)
    figures[name] = await pacedFlows(server.url, label, rate, PACED_DEAD_SECONDS)
    await stop(server)
  }
  return figures
}

/**
 * The webhook latency measure offers this share of the memory loan-flow saturation rate measured
 * just before it, in loans a second: ~400/s on an ordinary day (the fixed pace it replaced), and
 * less on a slow host, where the fixed pace kept the server busy 0.92 of a core and its p99 was
 * that queue's.
 */
const WEBHOOK_LATENCY_SHARE = 0.08

/** The webhook latency measure's rate: WEBHOOK_LATENCY_SHARE of `flowsPerSecond`, to the nearest 10/s. */
function webhookLatencyRate(flowsPerSecond) {
  return Math.max(50, Math.round((flowsPerSecond * WEBHOOK_LATENCY_SHARE) / 10) * 10)
}

/**
 * Runs the load client once, unmeasured, on a server thrown away after. The first server a fresh
 * client process loads stays faster for the rest of the run: two identical sandboxes compared in
 * turns gave 1.16x to the one warmed up first (GET config, 1.14x GET loans), 1.01x after this
 * warm-up. Without it the raw server, warmed up first, took that lead in `GET config vs raw`.
 */
async function warmUpClient() {
  console.log('client warm-up (unmeasured, on a server stopped after)')
  const server = await startSandbox('memory')
  await getConfig(server.url, 'warm-up, GET config')
  await stop(server)
}

async function main() {
  console.log(`sandbox benchmark: ${CONNECTIONS} connections, ${DURATION} s per run, node ${process.version}, ${cpus().length} CPUs\n`)
  const results = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, duration_s: DURATION, connections: CONNECTIONS, runs: {} }

  await warmUpClient()
  console.log('GET config: raw node:http and sandbox (memory storage), in turns')
  const raw = await startProcess([join(ROOT, 'test/bench/raw-server.js')], /raw ready: (\S+)/)
  const memory = await startSandbox('memory')
  const config = await compareInTurns({ raw, memory }, { raw: 'GET config-sized JSON, raw', memory: 'GET config' }, getConfig)
  results.runs.raw_config = config.raw
  results.runs.memory_config = config.memory
  await stop(raw)

  console.log('sandbox, memory storage')
  results.runs.memory_loans = await getLoans(memory.url)
  results.runs.memory_flows = await loanFlows(memory.url, 'loan flow POSTs (memory)')
  results.memory_rss_mb = Math.round(rssMb(memory.child.pid))
  results.memory_rss_settled_mb = await settledRssMb(memory.child.pid)
  await stop(memory)

  console.log('webhooks (memory storage)')
  const receiver = await startTimingReceiver()
  const local = await startSandbox('memory', undefined, ['--allow-local-webhooks'])
  results.webhook_latency = await measureDeliveryLatency(local.url, receiver, { serverPid: local.child.pid, rate: webhookLatencyRate(results.runs.memory_flows.requests_per_s) })
  console.log(`  answer -> receiver, ${results.webhook_latency.deliveries} deliveries: p50 ${results.webhook_latency.p50_ms} ms, p99 ${results.webhook_latency.p99_ms} ms, missing ${results.webhook_latency.missing}, ${results.webhook_latency.loans_per_s} loans/s (${results.webhook_latency.offered_per_s} offered), server CPU ${results.webhook_latency.server_cpu_share} of one core`)
  await stop(local)
  await receiver.close()
  const dead = await compareDeadReceiver()
  results.runs.flows_no_webhooks = dead.none
  results.runs.memory_flows_dead_receiver = dead.dead
  results.paced_dead_rate = pacedDeadRate(dead.none.requests_per_s)
  const paced = await comparePacedDeadReceiver(results.paced_dead_rate)
  results.runs.paced_flows_no_webhooks = paced.none
  results.runs.paced_flows_dead_receiver = paced.dead
  // The same load with a healthy receiver taking every event: what delivering webhooks costs at all.
  const healthy = await startTimingReceiver()
  const alive = await startSandbox('memory', undefined, ['--webhook-forward-to', healthy.url])
  results.runs.memory_flows_live_receiver = await loanFlows(alive.url, 'loan flow POSTs, receiver up')
  await stop(alive)
  await healthy.close()

  console.log('scenarios (sandbox run, every shipped scenario)')
  results.scenarios = await scenarioRun()
  console.log(`  against serve (memory): ${results.scenarios.wall_ms} ms wall, ${results.scenarios.requests} requests, ${results.scenarios.requests_per_s} req/s, ${results.scenarios.passed} passed, ${results.scenarios.failed} failed`)
  console.log(`  with its own in-process server: ${results.scenarios.in_process_wall_ms} ms wall`)

  console.log('start-up')
  results.startup = startupRatio()
  console.log(`  sandbox --help ${results.startup.help_ms.toFixed(1)} ms, node -e 0 ${results.startup.node_ms.toFixed(1)} ms`)

  // fs last: its writeback keeps the kernel busy for a while after, which would skew the
  // latency-sensitive runs above.
  console.log('sandbox, fs storage')
  const dataDir = mkdtempSync(join(tmpdir(), 'sandbox-bench-'))
  try {
    const fs = await startSandbox('fs', dataDir)
    results.runs.fs_config = await getConfig(fs.url)
    results.runs.fs_flows = await loanFlows(fs.url, 'loan flow POSTs (fs)')
    // The target load offered at a steady rate: latency there, not at saturation.
    results.runs.fs_flows_1500 = await pacedFlows(fs.url, 'loan flow POSTs (fs) paced at 1500/s', 1500)
    results.fs_rss_mb = Math.round(rssMb(fs.child.pid))
    results.fs_rss_settled_mb = await settledRssMb(fs.child.pid)
    await stop(fs)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }

  console.log('sandbox, redis storage')
  const redis = await startRedis()
  if (redis) {
    try {
      const server = await startSandbox(redis.url)
      results.runs.redis_flows = await loanFlows(server.url, 'loan flow POSTs (redis)')
      results.runs.redis_flows_1500 = await pacedFlows(server.url, 'loan flow POSTs (redis) paced at 1500/s', 1500)
      results.redis_rss_settled_mb = await settledRssMb(server.child.pid)
      await stop(server)
    } finally {
      await stop(redis)
      rmSync(redis.dir, { recursive: true, force: true })
    }
  } else {
    console.log('  skipped: no redis-server on the PATH')
  }

  const r = results.runs
  const targets = [
    ['GET config vs raw node:http', ratio(r.memory_config.requests_per_s, r.raw_config.requests_per_s), '>= 0.5x', (v) => v >= 0.5],
    ['fs loan-flow POSTs, req/s at saturation', r.fs_flows.requests_per_s, '>= 1500', (v) => v >= 1500],
    ['fs loan-flow POSTs paced at 1500/s: achieved req/s', r.fs_flows_1500.requests_per_s, '>= 1470 (98% of the 1500 offered)', (v) => v >= 1470],
    ['fs loan-flow POSTs paced at 1500/s: p99 ms', r.fs_flows_1500.p99_ms, '< 30', (v) => v < 30],
    ['server RSS 10 s after the runs, MB (memory storage)', results.memory_rss_settled_mb, '< 150', (v) => v < 150],
    ['server RSS 10 s after the runs, MB (fs storage)', results.fs_rss_settled_mb, '< 150', (v) => v < 150],
    ['server RSS at the last response, MB (memory / fs)', `${results.memory_rss_mb} / ${results.fs_rss_mb}`, 'shown', () => true],
    [`webhook answer -> receiver p50 ms (${results.webhook_latency.offered_per_s} loans/s offered)`, results.webhook_latency.p50_ms, '< 5', (v) => v < 5],
    ['webhook answer -> receiver p99 ms', results.webhook_latency.p99_ms, '< 25', (v) => v < 25],
    ['POSTs with a dead receiver vs none', ratio(r.memory_flows_dead_receiver.requests_per_s, r.flows_no_webhooks.requests_per_s), '>= 0.9x', (v) => v >= 0.9],
    [`POSTs paced at ${results.paced_dead_rate}/s (half of saturation) for ${PACED_DEAD_SECONDS} s, dead receiver vs none: achieved`, ratio(r.paced_flows_dead_receiver.requests_per_s, r.paced_flows_no_webhooks.requests_per_s), 'shown', () => true],
    [`POSTs paced at ${results.paced_dead_rate}/s: p99 ms, dead receiver / none`, `${r.paced_flows_dead_receiver.p99_ms} / ${r.paced_flows_no_webhooks.p99_ms}`, 'shown', () => true],
    ['POSTs with a dead receiver vs a healthy one', ratio(r.memory_flows_dead_receiver.requests_per_s, r.memory_flows_live_receiver.requests_per_s), 'shown', () => true],
    ['shipped scenarios against serve (memory), wall s', results.scenarios.wall_ms / 1000, '< 3', (v) => v < 3],
    ['shipped scenarios all passed', results.scenarios.failed === 0 && results.scenarios.passed > 0 ? 'yes' : 'no', 'yes', (v) => v === 'yes'],
    ['redis loan-flow POSTs, req/s at saturation', r.redis_flows?.requests_per_s ?? 'no redis-server', 'shown', () => true],
    ['redis loan-flow POSTs paced at 1500/s: p99 ms', r.redis_flows_1500?.p99_ms ?? 'no redis-server', 'shown', () => true],
    ['sandbox --help vs node -e 0', ratio(results.startup.help_ms, results.startup.node_ms), '< 1.6x', (v) => v < 1.6],
    ['non-2xx answers in all runs', Object.values(r).reduce((sum, run) => sum + run.non_2xx + run.errors, 0), '0', (v) => v === 0],
  ]
  results.targets = targets.map(([name, value, target, pass]) => ({ name, value: showFigure(value), target, pass: pass(value) }))
  console.log('\n| measure | value | target | |\n|---|---|---|---|')
  for (const row of results.targets) console.log(`| ${row.name} | ${row.value} | ${row.target} | ${row.pass ? 'ok' : 'MISSED'} |`)
  console.log(`\nmemory: GET config ${r.memory_config.requests_per_s}/s, GET loans ${r.memory_loans.requests_per_s}/s, flow POSTs ${r.memory_flows.requests_per_s}/s (p99 ${r.memory_flows.p99_ms} ms)`)
  mkdirSync(join(ROOT, 'test/bench/results'), { recursive: true })
  writeFileSync(join(ROOT, 'test/bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`)
  console.log('written to test/bench/results/latest.json')
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
}).finally(cleanup)
