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
    // e2e tests spawn the built CLI; keep parallelism modest on 2-core machines.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
})
