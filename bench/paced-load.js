// A paced load: `connections` workers on keep-alive sockets, each sending its next request on a
// fixed schedule so that together they offer `rate` requests per second. Latency is measured from
// the scheduled send time, so a slow answer that delays later requests counts against them too
// (no coordinated omission). autocannon's own rate mode sends in bursts, which distorts latency.
import { Agent, request } from 'node:http'

function send(agent, url, { method, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, headers, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end(body)
  })
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0
}

/** Runs the paced load; `nextRequest(worker)` gives each worker's next request. */
export async function runPacedLoad({ url, rate, durationSeconds, connections, nextRequest }) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const interval = (connections / rate) * 1000
  const start = performance.now() + 50
  const end = start + durationSeconds * 1000
  const latencies = []
  let non2xx = 0
  let errors = 0
  await Promise.all(Array.from({ length: connections }, async (_, worker) => {
    let scheduled = start + (worker * interval) / connections
    while (scheduled < end) {
      const wait = scheduled - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      try {
        const status = await send(agent, url, nextRequest(worker))
        if (status < 200 || status >= 300) non2xx++
      } catch {
        errors++
      }
      latencies.push(performance.now() - scheduled)
      scheduled += interval
    }
  }))
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const elapsed = (performance.now() - start) / 1000
  return {
    requests_per_s: Math.round(latencies.length / elapsed),
    p50_ms: Math.round(percentile(latencies, 0.5) * 10) / 10,
    p99_ms: Math.round(percentile(latencies, 0.99) * 10) / 10,
    non_2xx: non2xx,
    errors,
    total: latencies.length,
  }
}
