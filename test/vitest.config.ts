import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Paths below, and the tests', are relative to the repository root, one level up.
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
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
  },
})
