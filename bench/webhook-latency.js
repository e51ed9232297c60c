// Webhook figures for `npm run bench`: time from the API's answer to the receiver getting the
// event, on loopback.
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0
}

/** Starts a loopback receiver that notes when each loan's event arrived. */
export async function startTimingReceiver() {
  const arrivals = new Map()
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const at = performance.now()
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        if (event.type === 'sandbox.loan.issued') arrivals.set(event.data.object.id, at)
      } catch {}
      res.end('ok')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${server.address().port}/webhooks`, arrivals, close: () => new Promise((resolve) => server.close(resolve)) }
}

/**
 * Creates `count` loans over `keys` keys (each with its endpoint at the receiver) and measures,
 * per loan, answer-to-arrival time of its sandbox.loan.issued event.
 */
export async function measureDeliveryLatency(baseUrl, receiver, { keys = 10, count = 400 } = {}) {
  const keyList = Array.from({ length: keys }, (_, i) => `sk_sandbox_whbench_${i}_${randomUUID().slice(0, 8)}`)
  const post = (key, path, body) => fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  })
  for (const key of keyList) {
    const answer = await post(key, '/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.loan.issued'] })
    if (answer.status !== 200) throw new Error(`registering the bench endpoint answered ${answer.status}: ${await answer.text()}`)
  }
  const answered = new Map()
  const perKey = Math.ceil(count / keys)
  await Promise.all(keyList.map(async (key) => {
    for (let i = 0; i < perKey; i++) {
      const response = await post(key, '/api/sandbox/loans', { collateral_btc: 0.005, loan_amount: 100 })
      const at = performance.now()
      const body = await response.json()
      if (response.status !== 200) throw new Error(`POST /loans answered ${response.status}: ${JSON.stringify(body)}`)
      answered.set(body.activeLoans.at(-1).id, at)
      // A steady pace rather than a flood: latency of a delivery, not of a queue.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }))
  const deadline = Date.now() + 10_000
  while (receiver.arrivals.size < answered.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  const latencies = [...answered].filter(([id]) => receiver.arrivals.has(id)).map(([id, at]) => Math.max(0, receiver.arrivals.get(id) - at)).sort((a, b) => a - b)
  return {
    deliveries: latencies.length,
    missing: answered.size - latencies.length,
    p50_ms: Math.round(percentile(latencies, 0.5) * 100) / 100,
    p99_ms: Math.round(percentile(latencies, 0.99) * 100) / 100,
  }
}
