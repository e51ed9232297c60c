import { removeRunnerVariables } from './runner-env.js'

// Runs in every test worker before its test files (vitest setupFiles): each test, and every CLI it
// spawns with process.env, starts from the CLI's defaults whatever the runner exported. A test that
// needs CI, a colour setting or a SANDBOX_* value sets it (vi.stubEnv, or the child's env).
removeRunnerVariables()
