import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { isRunnerVariable, removeRunnerVariables } from '../helpers/runner-env.js'

// A CI runner exports CI=true (and often FORCE_COLOR); a developer may have SANDBOX_* settings
// exported for their own use of the CLI. Neither may change what the suite's tests see.
describe('the environment tests run in', () => {
  it('has none of the CI, colour, width, proxy or SANDBOX_* settings the runner exported, nor do the processes tests spawn', () => {
    const exported = (names: string[]) => names.filter(isRunnerVariable)
    expect(exported(Object.keys(process.env))).toEqual([])
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env)))'], { encoding: 'utf8', env: { ...process.env } })
    expect(exported(JSON.parse(child.stdout) as string[])).toEqual([])
  })

  it('drops the settings that change the CLI, and keeps the suite\'s own switches and the rest', () => {
    const env = {
      CI: 'true', FORCE_COLOR: '3', NO_COLOR: '1', COLUMNS: '40', SANDBOX_BASE_URL: 'http://127.0.0.1:9', SANDBOX_KEYS_FILE: '/tmp/k.json', SANDBOX_FUTURE_SETTING: 'x',
      HTTPS_PROXY: 'http://proxy:3128', https_proxy: 'http://proxy:3128', HTTP_PROXY: 'http://proxy:3128', http_proxy: 'http://proxy:3128', NO_PROXY: '.corp', no_proxy: '.corp',
      SANDBOX_TEST_REDIS: 'required', SANDBOX_TEST_PTY: 'required', SANDBOX_JUNIT_XSD: '/tmp/junit.xsd', PATH: '/usr/bin', TERM: 'dumb', CIRCLECI: 'true', SANDBOX: 'x',
      GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: '/home/runner/work/_temp/_runner_file_commands/step_summary_1', GITHUB_WORKSPACE: '/home/runner/work/app/app', GITHUB_SHA: 'abc123',
    }
    expect(removeRunnerVariables(env)).toEqual({ SANDBOX_TEST_REDIS: 'required', SANDBOX_TEST_PTY: 'required', SANDBOX_JUNIT_XSD: '/tmp/junit.xsd', PATH: '/usr/bin', TERM: 'dumb', CIRCLECI: 'true', SANDBOX: 'x', GITHUB_SHA: 'abc123' })
  })
})
