import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

// Files that replace a module (vi.mock) need a module graph of their own: found by reading them,
// so that a new one cannot run, unmocked, on modules another file already loaded.
const MOCKING_FILES = listTestFiles('test').filter((path) => /\bvi\.(?:do)?[mM]ock\(/.test(readFileSync(`${ROOT}${path}`, 'utf8')))

function listTestFiles(dir: string): string[] {
  return readdirSync(`${ROOT}${dir}`, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : listTestFiles(`${dir}/${entry.name}`)
    return entry.name.endsWith('.test.ts') ? [`${dir}/${entry.name}`] : []
  })
}

export default defineConfig({
  // Paths below, and the tests', are relative to the repository root, one level up.
  root: ROOT,
  test: {
    // The runner's CI, colour and SANDBOX_* variables would change the CLI's defaults under test.
    setupFiles: ['test/helpers/setup-env.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // e2e tests spawn the built CLI; keep parallelism modest on 2-core machines. Fixed, not
    // os.availableParallelism(): the tests mostly wait on child processes and timers, so two
    // workers overlap that waiting even on one core (taskset -c 0: 215 s with 2 workers, 279 s
    // with 1; beside two CPU burners on that core 460 s and 656 s, past CI's 10 minutes).
    // vitest's own default would be 1 worker on one core and on two.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
    // A worker keeps its modules from one file to the next: importing the server afresh for each of
    // 200 files took 91 s of import time, and the run 467 s; shared, 16 s and 384 s. The tests leave
    // nothing behind that would carry over (env through vi.stubEnv and unstubbed, spies restored,
    // real timers back); the files that mock a module keep a module graph of their own.
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...MOCKING_FILES], isolate: false } },
      { extends: true, test: { name: 'isolated', include: MOCKING_FILES, isolate: true } },
    ],
  },
})
