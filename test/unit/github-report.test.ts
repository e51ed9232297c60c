import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findWorkspacePath } from '../../src/cli/github-report.js'
import { escapeWorkflowData, escapeWorkflowProperty, findStepLines, formatGithubAnnotations, formatGithubSummary, formatWorkflowCommand, MAX_GITHUB_ERROR_ANNOTATIONS, MAX_GITHUB_SUMMARY_BYTES } from '../../src/scenarios/index.js'
import type { RunReport, ScenarioReport, StepReport } from '../../src/scenarios/index.js'

const passedStep: StepReport = { index: 0, name: 'read the config', kind: 'request', method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, duration_ms: 5, ok: true, failures: [] }
const failedStep: StepReport = {
  index: 1, name: 'kyt first, 100%', kind: 'request', method: 'POST', path: '/api/sandbox/loans/flow', status: 409, error_code: 'FLOW_CONFLICT', duration_ms: 7, ok: false,
  failures: [{ field: 'status', expected: 200, actual: 409, message: 'status: expected 200, got 409' }],
  sent: { body: { action: 'run_kyt' }, idempotency_key: 'idem-1' },
  received: { error_code: 'FLOW_CONFLICT', message: 'no draft: a|b\u001b[31m' },
  note: 'a hint',
}
const scenario = (overrides: Partial<ScenarioReport>): ScenarioReport => ({ id: 'wrong', name: 'Expects the wrong status', file: '/ws/scenarios/wrong.json', tags: [], status: 'passed', duration_ms: 20, requests: 2, steps: [passedStep], ...overrides })
const run = (scenarios: ScenarioReport[]): RunReport => ({
  base_url: 'http://127.0.0.1:4010', started_server: false, api_version: '0.3.0', started_at: '2026-11-25T22:00:00.000Z', duration_ms: 1234, requests: 9,
  passed: scenarios.filter((s) => s.status === 'passed').length, failed: scenarios.filter((s) => s.status === 'failed').length, skipped: scenarios.filter((s) => s.status === 'skipped').length,
  scenarios,
})
const failedRun = run([
  scenario({ id: 'loan-flow', name: 'Loan flow', file: '/ws/scenarios/loan-flow.json' }),
  scenario({ status: 'failed', steps: [passedStep, failedStep] }),
  scenario({ id: 'later', name: 'Later', status: 'skipped', duration_ms: 0, requests: 0, steps: [], error: 'not run: --bail after a failed scenario' }),
])

describe('workflow command escaping', () => {
  it('escapes %, CR and LF in data, and : and , too in properties', () => {
    expect(escapeWorkflowData('100% done\r\nnext: a, b')).toBe('100%25 done%0D%0Anext: a, b')
    expect(escapeWorkflowProperty('100% done\r\nnext: a, b')).toBe('100%25 done%0D%0Anext%3A a%2C b')
    expect(formatWorkflowCommand('error', { file: 'a,b.json', line: 3, title: undefined }, 'x')).toBe('::error file=a%2Cb.json,line=3::x')
    expect(formatWorkflowCommand('error', {}, 'x')).toBe('::error::x')
  })
})

describe('findStepLines', () => {
  const text = [
    '{',
    '  "name": "tricky [ { \\" ] }",',
    '  "tags": ["a]", {"b": ["}"]}],',
    '  "nested": { "steps": [1, 2, 3] },',
    '  "steps": [',
    '    { "name": "one", "request": { "method": "GET", "path": "/a" } },',
    '',
    '    {',
    '      "name": "two \\\\\\" [",',
    '      "expect": { "body": { "list": [1, {"x": "]"}] } }',
    '    }, { "name": "three" }',
    '  ]',
    '}',
  ].join('\n')

  it('gives the line each step starts on, past strings with brackets and escaped quotes and nested arrays', () => {
    expect(JSON.parse(text).steps).toHaveLength(3)
    expect(findStepLines(text)).toEqual([6, 8, 11])
  })

  it('counts CRLF once and no line for a byte order mark', () => {
    expect(findStepLines(`\uFEFF${text.replace(/\n/g, '\r\n')}`)).toEqual([6, 8, 11])
  })

  it('maps no lines it cannot be sure of', () => {
    expect(findStepLines('{"steps": [1,]}')).toBeUndefined() // not JSON
    expect(findStepLines('[{"steps": []}]')).toBeUndefined()
    expect(findStepLines('{"name": "x"}')).toBeUndefined()
    expect(findStepLines('{"steps": []}')).toEqual([])
  })
})

describe('formatGithubAnnotations', () => {
  it('gives one error per failed step at its file and line, titled by scenario and step, with the report\'s failure text', () => {
    const locations = new Map([['/ws/scenarios/wrong.json', { path: 'scenarios/wrong.json', stepLines: [4, 9] }]])
    const [annotation, ...rest] = formatGithubAnnotations(failedRun, { locations })
    expect(rest).toEqual([])
    expect(annotation).toBe('::error file=scenarios/wrong.json,line=9,title=wrong%3A step 2 (kyt first%2C 100%25)::'
      + 'step 2 (kyt first, 100%25): POST /api/sandbox/loans/flow%0Anote: a hint%0Asent: {"action":"run_kyt"}%0AIdempotency-Key: idem-1%0A'
      + 'status%0A  - expected 200%0A  + received 409%0Areceived: {"error_code":"FLOW_CONFLICT","message":"no draft: a|b\\u001b[31m"}')
  })

  it('leaves file and line out for a file outside the workspace, and gives setup stops the run\'s message', () => {
    expect(formatGithubAnnotations(failedRun)[0]).toMatch(/^::error title=wrong%3A step 2 \(kyt first%2C 100%25\)::step 2/)
    const stopped = run([scenario({ status: 'failed', steps: [], connection_error: true, error: 'cannot reach http://127.0.0.1:9' })])
    expect(formatGithubAnnotations(stopped, { stopMessage: 'cannot reach http://127.0.0.1:9; is the server running?' }))
      .toEqual(['::error title=wrong%3A the run stopped::cannot reach http://127.0.0.1:9; is the server running?'])
  })

  it('names the step a run stopped at in the title once the server had answered the run, as the run\'s message does', () => {
    const lost = { ...failedStep, status: null, failures: [{ field: 'connection', expected: 'an answer from the server', actual: null, message: 'cannot reach it (ECONNREFUSED) after 4 attempts' }] }
    const midway = run([scenario({ status: 'failed', steps: [passedStep, lost], connection_error: true, error: 'step 2 (kyt first, 100%): cannot reach it' })])
    expect(formatGithubAnnotations(midway, { stopMessage: 'step 2 (kyt first, 100%): cannot reach it; the server answered earlier steps' }))
      .toEqual(['::error title=wrong%3A step 2 (kyt first%2C 100%25)%3A the run stopped::step 2 (kyt first, 100%25): cannot reach it; the server answered earlier steps'])
    // Never answered: the server is what to look at, whatever the step.
    const never = run([scenario({ status: 'failed', steps: [{ ...lost, index: 0 }], connection_error: true, error: 'cannot reach it' })])
    expect(formatGithubAnnotations(never, { stopMessage: 'cannot reach it; is the server running?' })).toEqual(['::error title=wrong%3A the run stopped::cannot reach it; is the server running?'])
  })

  it('keeps to the 10 error annotations GitHub shows of a step, the setup stop first, and says how many more failed', () => {
    const failures = Array.from({ length: 12 }, (_, i) => scenario({ id: `s${i}`, status: 'failed', steps: [failedStep] }))
    const stopped = scenario({ id: 'stopper', status: 'failed', steps: [], connection_error: true, error: 'cannot reach it' })
    const annotations = formatGithubAnnotations(run([...failures, stopped]), { stopMessage: 'cannot reach it; is the server running?' })
    expect(annotations).toHaveLength(MAX_GITHUB_ERROR_ANNOTATIONS)
    expect(annotations[0]).toBe('::error title=stopper%3A the run stopped::cannot reach it; is the server running?')
    expect(annotations.slice(1, 9).map((line) => /title=(s\d+)%3A/.exec(line)?.[1])).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7'])
    expect(annotations[9]).toBe('::error title=sandbox run::4 more failures are not annotated (GitHub shows 10 error annotations per step): the job summary and the log have them all')
    expect(formatGithubAnnotations(run(failures.slice(0, 10)))).toHaveLength(10)
  })

  it('escapes control characters as the terminal report does, newlines of a title too', () => {
    const odd = run([scenario({ id: 'odd\u009b', status: 'failed', steps: [{ ...failedStep, name: 'a\nb' }] })])
    const [annotation] = formatGithubAnnotations(odd)
    expect(annotation).toContain('title=odd\\u009b%3A step 2 (a\\nb)::')
    expect(annotation).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
  })
})

describe('formatGithubSummary', () => {
  it('has a heading with the counts, a table of scenarios, and the failure\'s details', () => {
    const summary = formatGithubSummary(failedRun)
    expect(summary.split('\n').slice(0, 8)).toEqual([
      '## sandbox run: 1 passed, 1 failed, 1 skipped',
      '',
      '3 scenarios, 9 requests in 1.2 s against http://127.0.0.1:4010',
      '',
      '| Scenario | Status | Duration | Failed step | Note |',
      '|---|---|---|---|---|',
      '| loan-flow: Loan flow | ✅ passed | 20 ms |  |  |',
      '| wrong: Expects the wrong status | ❌ failed | 20 ms | step 2 (kyt first, 100%): status: expected 200, got 409 | a hint |',
    ])
    expect(summary).toContain('| later: Later | ⏭️ skipped | 0 ms |  | not run: --bail after a failed scenario |')
    expect(summary).toContain('### Failures\n\n#### wrong\n\n```text\nstep 2 (kyt first, 100%): POST /api/sandbox/loans/flow\nnote: a hint\n')
    expect(summary).toContain('received: {"error_code":"FLOW_CONFLICT","message":"no draft: a|b\\u001b[31m"}\n```\n')
  })

  it('gives a refused key\'s note once, as the failed step\'s message', () => {
    const refused = { ...failedStep, status: 401, note: 'the server accepts only registered keys: pass one with --api-key' }
    const summary = formatGithubSummary(run([scenario({ status: 'failed', steps: [refused], key_refused: true })]))
    expect(summary).toMatch(/^\| wrong: Expects the wrong status \| ❌ failed \| 20 ms \| step 2 \(kyt first, 100%\): the server accepts only registered keys: pass one with --api-key \| {2}\|$/m)
  })

  it('keeps each cell in its column: pipes, newlines and HTML in names are text', () => {
    const summary = formatGithubSummary(run([scenario({ name: 'a | b\nc <b>' })]))
    expect(summary).toContain('| wrong: a \\| b<br>c &lt;b&gt; | ✅ passed |')
  })

  it('stays bounded, and says how much it left out', () => {
    const huge = { ...failedStep, received: 'x'.repeat(100_000), note: 'n'.repeat(10_000) }
    const many = run(Array.from({ length: 3000 }, (_, i) => scenario({ id: `s${i}`, status: 'failed', steps: [huge] })))
    const summary = formatGithubSummary(many)
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(MAX_GITHUB_SUMMARY_BYTES)
    expect(summary).toMatch(/\n\d+ more scenarios not listed: the summary is kept under 256 KiB/)
    expect(summary).toMatch(/Details left out for \d+ more failed scenarios/)
  })
})

describe('findWorkspacePath', () => {
  it('is the path from the workspace with / separators, and none outside it or in node_modules', () => {
    expect(findWorkspacePath(join('/ws', 'ci', 'wrong.json'), '/ws')).toBe('ci/wrong.json')
    expect(findWorkspacePath('/elsewhere/wrong.json', '/ws')).toBeUndefined()
    expect(findWorkspacePath('/ws/node_modules/partner-sandbox/scenarios/loan-flow.json', '/ws')).toBeUndefined()
  })
})
