import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-secrets')

// Registers the runner's receiver (the answer holds the new signing secret) and expects a status
// the server does not give, so the answer is shown as a failure's "received", everywhere.
const REGISTER = JSON.stringify({
  name: 'Register and fail',
  description: 'the answer to a webhook registration holds its signing secret',
  steps: [{ request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}', rotate_secret: true, secret: 'whsec_my_own_secret_value_123' } }, expect: { status: 201, body: { 'endpoint.signingSecret': 'whsec_x' } } }],
})

// Captures the new signing secret, then sends it in a field no secret is known by, and fails there.
const PASS_ON = JSON.stringify({
  name: 'Pass the secret on',
  description: 'a captured signing secret sent in another field',
  steps: [
    { name: 'register', request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}', rotate_secret: true } }, capture: { secret: 'endpoint.signingSecret' } },
    { name: 'send it on', request: { method: 'POST', path: '/api/sandbox/partner', body: { display_name: '{{secret}}' } }, expect: { status: 418, body: { display_name: '{{secret}}' } } },
  ],
})

const WHOLE_SECRET = /whsec_[A-Za-z0-9_-]{5}/
const MASKED = /whsec_\*\*\*\*[A-Za-z0-9_-]{4}/

describe('sandbox run: a failed step\'s answer', () => {
  it('shows webhook signing secrets masked on the terminal, in the JSON and JUnit reports and in GitHub annotations and summary', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'register.json'), REGISTER)
    const summary = join(workspace, 'summary.md')
    const env = { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: workspace, GITHUB_STEP_SUMMARY: summary }
    const text = await runCli(['run', 'register.json', '--junit', 'report.xml'], { cwd: workspace, env })
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/^::error file=register\.json/m)
    const shown = { terminal: text.stdout + text.stderr, junit: await readFile(join(workspace, 'report.xml'), 'utf8'), summary: await readFile(summary, 'utf8') }
    for (const [where, output] of Object.entries(shown)) {
      expect(output, where).toMatch(MASKED)
      expect(output, where).not.toMatch(WHOLE_SECRET)
    }
    const json = await runCli(['run', 'register.json', '--json'], { cwd: workspace })
    expect(json.code).toBe(1)
    const step = JSON.parse(json.stdout).scenarios[0].steps[0]
    expect(step.received.endpoint.signingSecret).toMatch(MASKED)
    expect(step.sent.body.secret).toBe('whsec_****_123')
    expect(json.stdout).not.toMatch(WHOLE_SECRET)
  })

  it('masks a secret a variable carried into another field, in every report and in --verbose', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const workspace = await tempDir()
    await writeFile(join(workspace, 'pass-on.json'), PASS_ON)
    const summary = join(workspace, 'summary.md')
    const env = { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: workspace, GITHUB_STEP_SUMMARY: summary }
    const [text, json] = await Promise.all([
      runCli(['run', 'pass-on.json', '--junit', 'report.xml', '--verbose'], { cwd: workspace, env }),
      runCli(['run', 'pass-on.json', '--json', '--verbose'], { cwd: workspace }),
    ])
    expect([text.code, json.code]).toEqual([1, 1])
    expect(text.stdout).toMatch(/^::error file=pass-on\.json,line=\d+,title=pass-on%3A step 2 \(send it on\)::/m)
    expect(text.stdout).toMatch(/^ {6}sent \{"display_name":"whsec_\*\*\*\*[A-Za-z0-9_-]{4}"\}$/m)
    expect(text.stdout).toMatch(/^ {6}> \{"display_name":"whsec_\*\*\*\*[A-Za-z0-9_-]{4}"\}$/m)
    const shown = { terminal: text.stdout + text.stderr, junit: await readFile(join(workspace, 'report.xml'), 'utf8'), summary: await readFile(summary, 'utf8'), json: json.stdout, verbose: json.stderr }
    for (const [where, output] of Object.entries(shown)) {
      expect(output, where).toMatch(MASKED)
      expect(output, where).not.toMatch(WHOLE_SECRET)
    }
    const step = JSON.parse(json.stdout).scenarios[0].steps[1]
    expect(step.sent.body.display_name).toMatch(MASKED)
    expect(step.failures.find((failure: { field: string }) => failure.field === 'body.display_name').expected).toMatch(MASKED)
  })
})
