// Webhook figures for `npm run bench`: time from the API's answer to the receiver getting the
// event, on loopback.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0
}

/**
 * Starts the timing receiver as its own process (test/bench/timing-receiver.js) and collects, per loan,
 * when its sandbox.loan.issued event arrived, in process.hrtime nanoseconds.
 */
export async function startTimingReceiver() {
  const arrivals = new Map()
  const child = spawn(process.execPath, [new URL('./timing-receiver.js', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] })
  let buffered = ''
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        const ready = /^receiver ready: (\S+)/.exec(line)
        if (ready) resolve(ready[1])
        else {
          const [id, at] = line.split(' ')
          arrivals.set(id, BigInt(at))
        }
      }
    })
    child.once('exit', (code) => reject(new Error(`timing receiver exited ${code}`)))
  })
  return {
    url,
    arrivals,
    close: () => new Promise((resolve) => {
      child.once('exit', resolve)
      child.kill('SIGTERM')
    }),
  }
}

/** CPU time (user + system, all threads) a process has used, in ms; Linux /proc only. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/**
 * Creates `count` loans over `keys` keys (each with its endpoint at the receiver) and measures,
 * per loan, answer-to-arrival time of its sandbox.loan.issued event.
 *
 * Loans are offered at `rate` a second in all, each key on its own fixed schedule (a key whose
 * answer comes late sends its next loan at once, catching up with its schedule). The
 * caller sets `rate` relative to the host (run.js: a share of the loan-flow saturation rate),
 * so it asks a delivery of a fast host and a slow one, not a queue: a fixed pace (20 ms after
 * each answer, ~340-440 loans/s) kept a slow host's server busy 0.92 of a core, and at 5 ms the
 * server was saturated and p99 measured its queue. `serverPid`, when given, reports how busy
 * the server was (`server_cpu_share`).
 */
export async function measureDeliveryLatency(baseUrl, receiver, { keys = 10, count = 400, rate = 400, serverPid } = {}) {
  const keyList = Array.from({ length: keys }, (_, i) => `sk_sandbox_whbench_${i}_${randomUUID().slice(0, 8)}`)
  // node:http with keep-alive rather than fetch: the load generator shares 2 cores with the server
  // and the receiver, and every millisecond it burns delays one of them.
  const agent = new Agent({ keepAlive: true, maxSockets: keys })
  const post = (key, path, body) => new Promise((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = request(`${baseUrl}${path}`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'idempotency-key': randomUUID() },
    }, (res) => {
      const at = process.hrtime.bigint()
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, at, text: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end(text)
  })
  for (const key of keyList) {
    const answer = await post(key, '/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.loan.issued'] })
    if (answer.status !== 200) throw new Error(`registering the bench endpoint answered ${answer.status}: ${answer.text}`)
  }
  const answered = new Map()
  const perKey = Math.ceil(count / keys)
  // Warm-up loans (JIT, first connections) are delivered but not counted.
  const warmUp = 2
  const cpuBefore = serverPid && cpuMs(serverPid)
  const started = performance.now()
  // Each key sends every `period` ms, the keys spread evenly over one period.
  const period = (keys * 1000) / rate
  await Promise.all(keyList.map(async (key, k) => {
    for (let i = -warmUp; i < perKey; i++) {
      const due = started + (i + warmUp) * period + (k * period) / keys
      const wait = due - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const response = await post(key, '/api/sandbox/loans', { collateral_btc: 0.005, loan_amount: 100 })
      if (response.status !== 200) throw new Error(`POST /loans answered ${response.status}: ${response.text}`)
      // The answer's arrival (status line and headers), as a partner's code would first see it.
      const loanId = JSON.parse(response.text).activeLoans.at(-1).id
      if (i >= 0) answered.set(loanId, response.at)
    }
  }))
  const loadMs = performance.now() - started
  const cpuAfter = serverPid && cpuMs(serverPid)
  const deadline = Date.now() + 10_000
  // Every counted loan's event, by id: the warm-up loans' arrivals are in the map too, so its
  // size reached the count while the last deliveries were still under way.
  const arrived = () => [...answered.keys()].every((id) => receiver.arrivals.has(id))
  while (!arrived() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  agent.destroy()
  const latencies = [...answered].filter(([id]) => receiver.arrivals.has(id))
    .map(([id, at]) => Math.max(0, Number(receiver.arrivals.get(id) - at) / 1e6)).sort((a, b) => a - b)
  return {
    deliveries: latencies.length,
    missing: answered.size - latencies.length,
    p50_ms: Math.round(percentile(latencies, 0.5) * 100) / 100,
    p99_ms: Math.round(percentile(latencies, 0.99) * 100) / 100,
    offered_per_s: rate,
    loans_per_s: Math.round(((keys * (perKey + warmUp)) / loadMs) * 1000),
    server_cpu_share: cpuBefore !== undefined && cpuAfter !== undefined ? Math.round(((cpuAfter - cpuBefore) / loadMs) * 100) / 100 : null,
  }
}
