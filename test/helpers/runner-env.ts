/**
 * Variables a CI runner or a developer's shell may export that change what the CLI does or prints
 * by default: `CI` (no prompts), `FORCE_COLOR` and `NO_COLOR` (colour), `COLUMNS` (help width), and
 * the CLI's own `SANDBOX_*` settings (an exported SANDBOX_BASE_URL sent every `sandbox run` of the
 * suite to that server, a SANDBOX_KEYS_FILE put every `serve` in registered-keys mode), and the
 * proxy variables `sandbox run` follows (a runner's proxy is not the tests' own), and
 * NODE_EXTRA_CA_CERTS (CI images set it to the system bundle; the advice on an untrusted
 * certificate names it when it is set). The suite's own
 * switches, `SANDBOX_TEST_*` and `SANDBOX_JUNIT_XSD`, are not the CLI's and stay.
 */
const RUNNER_VARIABLE = /^(?:CI|FORCE_COLOR|NO_COLOR|COLUMNS|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|NODE_EXTRA_CA_CERTS|SANDBOX_(?!TEST_|JUNIT_XSD$)\w+)$/

/**
 * GitHub Actions' own, which `sandbox run` reports into (annotations, and a job summary appended
 * to the runner's GITHUB_STEP_SUMMARY file, which a suite run in Actions must not write into).
 */
const GITHUB_VARIABLE = /^GITHUB_(?:ACTIONS|STEP_SUMMARY|WORKSPACE)$/

/** Whether NAME is one of the variables above, which a test that needs one sets itself. */
export function isRunnerVariable(name: string): boolean {
  return RUNNER_VARIABLE.test(name) || GITHUB_VARIABLE.test(name)
}

/** Deletes the variables above from ENV (process.env by default), in place. */
export function removeRunnerVariables(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  for (const name of Object.keys(env)) if (isRunnerVariable(name)) delete env[name]
  return env
}
