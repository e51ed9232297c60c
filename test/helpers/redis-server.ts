import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterAll } from 'vitest'
import { findFreePort } from './free-port.js'

/** A redis-server of the test file's own, on a free loopback port, with no persistence. */
export interface TestRedis {
  url: string
  port: number
  /** Stops the server (SIGKILL): the sandbox sees its connection drop. */
  kill(): Promise<void>
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>
  /** Stops its process (SIGSTOP) with its connections open: what the sandbox sends waits, unanswered. */
  pause(): void
  /** Lets a paused server run on (SIGCONT): it answers, in order, what it was sent meanwhile. */
  resume(): void
  /** Deletes every key (between tests). */
  flush(): Promise<void>
}

/**
 * Whether redis tests run: `redis-server` on the PATH. CI installs it and sets
 * SANDBOX_TEST_REDIS=required, so there a missing binary fails instead of skipping.
 */
export const hasRedis = (() => {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0
  if (!found && process.env.SANDBOX_TEST_REDIS === 'required') throw new Error('SANDBOX_TEST_REDIS=required but redis-server is not on the PATH')
  return found
})()

/** How a test's redis-server differs from a plain one. */
export interface TestRedisOptions {
  /** requirepass: clients must authenticate. */
  password?: string
  /** TLS only (no plain port), with this certificate and key: the URL is rediss://. */
  tls?: { cert: string; key: string }
}

function startOn(port: number, options: TestRedisOptions): Promise<ChildProcess> {
  const listen = options.tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.cert, '--tls-key-file', options.tls.key, '--tls-auth-clients', 'no']
    : ['--port', String(port)]
  const auth = options.password ? ['--requirepass', options.password] : []
  const child = spawn('redis-server', [...listen, ...auth, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk
      if (out.includes('Ready to accept connections')) resolve(child)
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)))
  })
}

/**
 * Starts a redis-server for the calling test file and stops it after the file's tests (call
 * only when `hasRedis`).
 */
export function useTestRedis(options: TestRedisOptions = {}): () => Promise<TestRedis> {
  let child: ChildProcess | undefined
  let started: Promise<TestRedis> | undefined
  const stopChild = async () => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  afterAll(stopChild)
  return () => {
    started ??= (async () => {
      // Another process may take the free port before redis-server binds it: try a new one.
      let port = 0
      for (let attempt = 1; !child; attempt++) {
        port = await findFreePort()
        child = await startOn(port, options).catch((error: Error) => {
          if (attempt >= 3) throw error
          return undefined
        })
      }
      const auth = options.password ? `:${options.password}@` : ''
      const redis: TestRedis = {
        url: `${options.tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}/0`,
        port,
        kill: stopChild,
        async restart() {
          await stopChild()
          child = await startOn(port, options)
        },
        pause() {
          child?.kill('SIGSTOP')
        },
        resume() {
          child?.kill('SIGCONT')
        },
        async flush() {
          const client = new Redis(redis.url, options.tls ? { tls: { rejectUnauthorized: false } } : {})
          await client.flushall()
          await client.quit()
        },
      }
      return redis
    })()
    return started
  }
}
