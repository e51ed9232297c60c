import { describe, expect, it } from 'vitest'
import { runWalk, type WalkOptions } from '../helpers/fuzz/walk.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

// Fixed seeds keep this bounded and deterministic. To hunt, run many:
//   FUZZ_SEEDS=1-300 FUZZ_STEPS=400 FUZZ_STORAGE=fs npx vitest run --config test/vitest.config.ts test/api/fuzz-walk.test.ts --testTimeout=0
// (FUZZ_STORAGE: memory, the default; fs; or redis, on a redis-server of its own when one is on the PATH)
const makeDir = useTempDirs('fuzz-walk')
const testRedis = hasRedis ? useTestRedis() : undefined

/** A redis database emptied for one walk (a walk's keys are its seed's, but a restart checks the whole store). */
async function emptyRedis(): Promise<string> {
  if (!testRedis) throw new Error('FUZZ_STORAGE=redis needs redis-server on the PATH')
  const redis = await testRedis()
  await redis.flush()
  return redis.url
}

function seedsFromEnv(): number[] | undefined {
  const text = process.env.FUZZ_SEEDS
  if (!text) return undefined
  return text.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number) as [number, number | undefined]
    return Array.from({ length: (to ?? from) - from + 1 }, (_, i) => from + i)
  })
}

async function expectCleanWalk(options: WalkOptions): Promise<void> {
  const report = await runWalk(options)
  if (process.env.FUZZ_VERBOSE) console.log(`seed ${options.seed}: ${report.requests} requests, loans ${report.loans.join('/')}, ${JSON.stringify(report.counts)}`)
  if (report.problems.length > 0) {
    // The seed and the requests reproduce the failure: rerun with FUZZ_SEEDS=<seed>.
    console.error(`fuzz walk seed ${options.seed} (${options.storage ?? 'memory'}, ${options.steps} steps) failed after ${report.requests} requests:\n${report.problems.slice(0, 5).join('\n')}\n--- requests ---\n${report.trace}`)
  }
  expect(report.problems, `seed ${options.seed}`).toEqual([])
}

const hunted = seedsFromEnv()
describe('a seeded random walk over the API keeps every invariant', () => {
  if (hunted) {
    const steps = Number(process.env.FUZZ_STEPS ?? 300)
    const storage = process.env.FUZZ_STORAGE === 'fs' || process.env.FUZZ_STORAGE === 'redis' ? process.env.FUZZ_STORAGE : 'memory'
    for (const seed of hunted) {
      it(`seed ${seed}`, async () => {
        await expectCleanWalk({ seed, steps, storage, restarts: Number(process.env.FUZZ_RESTARTS ?? 2), keys: Number(process.env.FUZZ_KEYS ?? 3), transport: process.env.FUZZ_PORT ? 'port' : 'in-process', clockJumps: Boolean(process.env.FUZZ_CLOCK), ...(storage === 'fs' && { dataDir: await makeDir() }), ...(storage === 'redis' && { redisUrl: await emptyRedis() }) })
      })
    }
    return
  }
  for (const seed of [1, 2, 3]) {
    it(`memory storage, seed ${seed}, with a price and LTV change between`, async () => {
      await expectCleanWalk({ seed, steps: 150, restarts: 1 })
    })
  }
  it('over a real port on 127.0.0.1 (Node\'s request path), seed 4', async () => {
    await expectCleanWalk({ seed: 4, steps: 150, restarts: 1, transport: 'port' })
  })
  it('one key, long enough for loan histories and idempotency batches to be stored by reference', async () => {
    await expectCleanWalk({ seed: 5, steps: 400, keys: 1, restarts: 2 })
  })
  it('with the wall clock stepped forward and back between requests, seed 8', async () => {
    await expectCleanWalk({ seed: 8, steps: 150, restarts: 1, clockJumps: true })
  })
  it('fs storage, restarted twice mid-walk, keeps its state exactly', async () => {
    await expectCleanWalk({ seed: 7, steps: 120, storage: 'fs', dataDir: await makeDir(), restarts: 2 })
  })
  it.skipIf(!hasRedis)('redis storage, restarted twice mid-walk, keeps its state exactly', async () => {
    await expectCleanWalk({ seed: 9, steps: 120, storage: 'redis', redisUrl: await emptyRedis(), restarts: 2 })
  })
})
