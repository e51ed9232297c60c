// A paced load: `connections` workers on keep-alive sockets, each sending its next request on a
// fixed schedule so that together they offer `rate` requests per second. Latency is measured from
// the scheduled send time, so a slow answer that delays later requests counts against them too
// (no coordinated omission). autocannon's own rate mode sends in bursts, which distorts latency.
//
// The client speaks HTTP/1.1 on raw sockets: it shares the machine's cores with the server, and
// its own pauses (waiting for a core, garbage collection) count as the server's latency here.
// node:http's client took a quarter of a core at 1,500 requests/s; this one takes a fraction.
import { connect } from 'node:net'

const HEAD_END = Buffer.from('\r\n\r\n')

/** Where a complete response ends in `buf`, with its status; null while more bytes are needed. */
function parseResponse(buf) {
  const headEnd = buf.indexOf(HEAD_END)
  if (headEnd < 0) return null
  const head = buf.toString('latin1', 0, headEnd)
  const status = Number(head.slice(9, 12))
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
  if (length) {
    const end = headEnd + 4 + Number(length[1])
    return buf.length >= end ? { status, end } : null
  }
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) throw new Error(`response without a length: ${head.split('\r\n')[0]}`)
  let at = headEnd + 4
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at)
    if (lineEnd < 0) return null
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16)
    const next = lineEnd + 2 + size + 2
    if (buf.length < next) return null
    if (size === 0) return { status, end: next }
    at = next
  }
}

/** One keep-alive connection sending one request at a time. */
function openConnection(port, host) {
  let socket = null
  let pending = null
  let buf = Buffer.alloc(0)
  const fail = (error) => {
    socket = null
    buf = Buffer.alloc(0)
    const waiting = pending
    pending = null
    waiting?.reject(error)
  }
  const ensure = () => {
    if (socket) return socket
    socket = connect(port, host)
    socket.setNoDelay(true)
    const own = socket
    own.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk
      let parsed
      try {
        parsed = parseResponse(buf)
      } catch (error) {
        own.destroy()
        return fail(error)
      }
      if (!parsed) return
      buf = buf.subarray(parsed.end)
      const waiting = pending
      pending = null
      waiting?.resolve(parsed.status)
    })
    own.on('error', (error) => { if (socket === own) fail(error) })
    own.on('close', () => { if (socket === own) fail(new Error('connection closed')) })
    return own
  }
  return {
    send(text) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject }
        ensure().write(text)
      })
    },
    close: () => socket?.destroy(),
  }
}

/** The bytes of one HTTP/1.1 request. */
function formatRequest(host, { method, path, headers, body = '' }) {
  let text = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`
  return `${text}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0
}

/** Runs the paced load; `nextRequest(worker)` gives each worker's next request. */
export async function runPacedLoad({ url, rate, durationSeconds, connections, nextRequest }) {
  const { hostname, port, host } = new URL(url)
  const interval = (connections / rate) * 1000
  const start = performance.now() + 50
  const end = start + durationSeconds * 1000
  const latencies = []
  let non2xx = 0
  let errors = 0
  const cpuBefore = process.cpuUsage()
  await Promise.all(Array.from({ length: connections }, async (_, worker) => {
    const connection = openConnection(Number(port), hostname)
    let scheduled = start + (worker * interval) / connections
    while (scheduled < end) {
      const wait = scheduled - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      try {
        const status = await connection.send(formatRequest(host, nextRequest(worker)))
        if (status < 200 || status >= 300) non2xx++
      } catch {
        errors++
      }
      latencies.push(performance.now() - scheduled)
      scheduled += interval
    }
    connection.close()
  }))
  const cpu = process.cpuUsage(cpuBefore)
  latencies.sort((a, b) => a - b)
  const elapsed = (performance.now() - start) / 1000
  return {
    requests_per_s: Math.round(latencies.length / elapsed),
    p50_ms: Math.round(percentile(latencies, 0.5) * 10) / 10,
    p99_ms: Math.round(percentile(latencies, 0.99) * 10) / 10,
    non_2xx: non2xx,
    errors,
    total: latencies.length,
    // The load generator's own CPU, as a share of one core: what it took from the server.
    client_cpu_share: Math.round(((cpu.user + cpu.system) / 1e6 / elapsed) * 100) / 100,
  }
}
