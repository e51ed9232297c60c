// A restart of `serve` with thousands of keys whose forward deliveries wait (not part of
// `npm run bench`): seeds a data dir (or a redis dump) once, then restarts the built CLI on a copy
// and measures time to `sandbox ready`, API latency in the first seconds, peak open descriptors and
// RSS, and the time until the backlog is delivered (receiver up) or the server settles (receiver
// dead). Loopback only.
//
//   node test/bench/resume-backlog.js seed fs|redis KEYS DIR
//   node test/bench/resume-backlog.js run fs|redis DIR up|dead
import { spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const CLI = new URL('../../bin/sandbox.js', import.meta.url).pathname
const EVENTS_PER_KEY = 3
// Long steps, so the seeding spends few attempts; after the restart every head is due.
const SCHEDULE = ['1s', ...Array(19).fill('1m')].join(',')

const freePort = () => new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    server.close(() => resolve(port))
  })
})

function startServe(args) {
  const started = performance.now()
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--rate-limit', 'off', '--quiet', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (chunk) => { err += chunk })
  const ready = new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = /sandbox ready: (\S+)/.exec(out)
      if (match) resolve({ url: match[1], readyMs: performance.now() - started })
    })
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)))
  })
  return { child, ready, stop: (signal = 'SIGTERM') => new Promise((resolve) => { child.once('exit', resolve); child.kill(signal) }) }
}

function call(agent, url, method, key, body) {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const headers = { authorization: `Bearer ${key}` }
    if (text) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'idempotency-key': randomUUID() })
    const req = request(url, { method, agent, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }))
    })
    req.on('error', reject)
    req.end(text)
  })
}

function redisServer(dir, port) {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolve) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('Ready to accept connections')) resolve({ url: `redis://127.0.0.1:${port}/0`, stop: () => new Promise((done) => { child.once('exit', done); child.kill('SIGKILL') }) })
    })
  })
}

async function seed(kind, keys, dir) {
  const deadPort = await freePort()
  const redis = kind === 'redis' ? await redisServer(dir, await freePort()) : undefined
  const storage = redis ? ['--storage', redis.url] : ['--data-dir', dir]
  const serve = startServe([...storage, '--webhook-forward-to', `http://127.0.0.1:${deadPort}/forward`, '--webhook-retry-schedule', SCHEDULE])
  const { url } = await serve.ready
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  let next = 0
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < keys) {
      const key = `sk_sandbox_resume_${next++}_${randomUUID().slice(0, 8)}`
      for (let i = 0; i < EVENTS_PER_KEY; i++) {
        const answer = await call(agent, `${url}/api/sandbox/loans`, 'POST', key, { collateral_btc: 0.005, loan_amount: 100 })
        if (answer.status !== 200) throw new Error(`seed: ${answer.status}`)
      }
    }
  }))
  agent.destroy()
  // Killed: the refused attempts are counted in memory only, so every head is due at the restart.
  await serve.stop('SIGKILL')
  if (redis) {
    spawnSync('redis-cli', ['-u', redis.url, 'SAVE'])
    await redis.stop()
  } else {
    // A start without a forward target replays the journal and leaves the forward deliveries as they are.
    const plain = startServe(['--data-dir', dir])
    await plain.ready
    await plain.stop()
  }
  writeFileSync(`${dir.replace(/\/+$/, '')}.events`, String(keys * EVENTS_PER_KEY))
  console.log(`seeded ${keys} keys x ${EVENTS_PER_KEY} events in ${dir}`)
}

function sample(pid) {
  try {
    const fds = readdirSync(`/proc/${pid}/fd`).length
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return { fds, rss, cpu: (Number(fields[11]) + Number(fields[12])) * 10 }
  } catch {
    return undefined
  }
}

function startReceiver(port) {
  const ids = new Set()
  let received = 0
  let lastAt = 0
  let open = 0
  let peakOpen = 0
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      received++
      try {
        const size = ids.size
        ids.add(JSON.parse(Buffer.concat(chunks).toString('utf8')).id)
        if (ids.size > size) lastAt = performance.now()
      } catch {}
      res.end('ok')
    })
  })
  server.on('connection', (socket) => {
    peakOpen = Math.max(peakOpen, ++open)
    socket.on('close', () => open--)
  })
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({
    get unique() { return ids.size },
    get received() { return received },
    get lastAt() { return lastAt },
    get peakOpen() { return peakOpen },
    close: () => new Promise((done) => { server.closeAllConnections(); server.close(done) }),
  })))
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN
}

async function run(kind, seedDir, receiverState) {
  seededEvents = Number(readFileSync(join(seedDir, '..', `${seedDir.split('/').at(-1)}.events`), 'utf8'))
  const dir = mkdtempSync(join(tmpdir(), 'resume-run-'))
  cpSync(seedDir, dir, { recursive: true })
  const redis = kind === 'redis' ? await redisServer(dir, await freePort()) : undefined
  const port = await freePort()
  const receiver = receiverState === 'up' ? await startReceiver(port) : undefined
  const storage = redis ? ['--storage', redis.url] : ['--data-dir', dir]
  const serve = startServe([...storage, '--webhook-forward-to', `http://127.0.0.1:${port}/forward`, '--webhook-retry-schedule', SCHEDULE])
  const pid = serve.child.pid
  let peakFds = 0
  let peakRss = 0
  const cpuAt = []
  const sampler = setInterval(() => {
    const now = sample(pid)
    if (!now) return
    peakFds = Math.max(peakFds, now.fds)
    peakRss = Math.max(peakRss, now.rss)
    cpuAt.push([performance.now(), now.cpu])
  }, 5)
  const { url, readyMs } = await serve.ready
  const readyAt = performance.now()
  // One client polling the API (a read and a write of a key of its own) every 50 ms for 10 s.
  const agent = new Agent({ keepAlive: true, maxSockets: 2 })
  const key = `sk_sandbox_probe_${randomUUID().replaceAll('-', '')}`
  const latencies = []
  const firstTwo = []
  let probeWrites = 0
  while (performance.now() - readyAt < 10_000) {
    const tick = performance.now()
    const read = await call(agent, `${url}/api/sandbox/loans`, 'GET', key)
    const write = await call(agent, `${url}/api/sandbox/loans`, 'POST', key, { collateral_btc: 0.005, loan_amount: 100 })
    if (write.status === 200) probeWrites++
    for (const answer of [read, write]) {
      latencies.push(answer.ms)
      if (tick - readyAt < 2_000) firstTwo.push(answer.ms)
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 50 - (performance.now() - tick))))
  }
  agent.destroy()
  // Receiver up: until every seeded event arrived (the probe key's own ones aside). Dead: until a
  // second of server CPU under 5%.
  let doneMs
  const limit = performance.now() + 180_000
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    const now = performance.now()
    if (receiver && receiver.unique >= seededEvents + probeWrites) { doneMs = receiver.lastAt - readyAt; break }
    if (!receiver) {
      const last = cpuAt.at(-1)
      const before = cpuAt.findLast(([at]) => at <= now - 1000)
      if (before && last && (last[1] - before[1]) / (last[0] - before[0]) < 0.05) { doneMs = now - readyAt - 1000; break }
    }
    if (now > limit) break
  }
  clearInterval(sampler)
  const cpuTenS = (() => {
    const first = cpuAt.find(([at]) => at >= readyAt - 10)
    const tenth = cpuAt.findLast(([at]) => at <= readyAt + 10_000)
    return first && tenth ? tenth[1] - first[1] : NaN
  })()
  await serve.stop()
  await receiver?.close()
  await redis?.stop()
  rmSync(dir, { recursive: true, force: true })
  const round = (value) => Math.round(value)
  console.log(JSON.stringify({
    kind, receiver: receiverState,
    ready_ms: round(readyMs),
    api_first_2s: { n: firstTwo.length, p50: round(percentile(firstTwo, 0.5)), p99: round(percentile(firstTwo, 0.99)), max: round(Math.max(...firstTwo)) },
    api_10s: { n: latencies.length, p50: round(percentile(latencies, 0.5)), p99: round(percentile(latencies, 0.99)), max: round(Math.max(...latencies)) },
    peak_fds: peakFds, peak_rss_mb: round(peakRss), cpu_first_10s_ms: cpuTenS,
    done_ms: doneMs === undefined ? null : round(doneMs),
    probe_writes: probeWrites, received: receiver?.received, unique: receiver?.unique, receiver_peak_connections: receiver?.peakOpen,
  }))
}

let seededEvents = 0

const [mode, kind, a, b] = process.argv.slice(2)
if (mode === 'seed') await seed(kind, Number(a), b)
else await run(kind, a, b)
