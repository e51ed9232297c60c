import { spawn, type ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { findFreePort } from '../helpers/free-port.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const testRedis = useTestRedis()
const tempDir = useTempDirs('sandbox-redis-sentinel')
let sentinel: ChildProcess | undefined

afterEach(async () => {
  const running = sentinel
  sentinel = undefined
  if (!running || running.exitCode !== null) return
  const exited = new Promise((resolve) => running.once('exit', resolve))
  running.kill('SIGKILL')
  await exited
})

/** A redis sentinel (which answers INFO but not EXISTS, GET or SET) on a free loopback port. */
async function startSentinel(primaryPort: number): Promise<number> {
  const port = await findFreePort()
  const config = join(await tempDir(), 'sentinel.conf')
  await writeFile(config, `port ${port}\nbind 127.0.0.1\nsentinel monitor main 127.0.0.1 ${primaryPort} 1\n`)
  const child = spawn('redis-server', [config, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] })
  sentinel = child
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk
      if (/Sentinel ID is|Running mode=sentinel/.test(out)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis sentinel exited ${code}: ${out}`)))
  })
  return port
}

describe.skipIf(!hasRedis)('a redis URL whose port is a sentinel\'s', () => {
  it('says that the port is not a redis server\'s, rather than to start redis', async () => {
    const redis = await testRedis()
    const port = await startSentinel(redis.port)
    for (const owner of [true, false]) {
      const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toBe(`cannot use redis at redis://127.0.0.1:${port}/0 (ERR unknown command 'exists'); it does not take a command every redis server takes: check that the port is a redis server's, not a sentinel's (26379 by default) or a proxy's`)
    }
  })
})
