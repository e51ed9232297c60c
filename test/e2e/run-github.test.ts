import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { findClosedPort } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-github')

// Saved as a Windows editor might (byte order mark, CRLF), with brackets in a string before the
// steps: the failing step, the second, starts on line 7.
const WRONG = [
  '{',
  '  "name": "Expects the wrong status",',
  '  "description": "run_kyt with no draft is a 409, not a 200 (\\"[x]\\" and {y} are text)",',
  '  "steps": [',
  '    { "name": "read the config", "request": { "method": "GET", "path": "/api/sandbox/config" } },',
  '',
  '    {',
  '      "name": "kyt first",',
  '      "request": { "method": "POST", "path": "/api/sandbox/loans/flow", "body": { "action": "run_kyt" } },',
  '      "expect": { "status": 200 }',
  '    }',
  '  ]',
  '}',
].join('\r\n')

const EARLIER = '### Set up\n\nwritten by an earlier step\n'
const ANNOTATION = /^::error file=checks%2Cv2\/wrong\.json,line=7,title=wrong%3A step 2 \(kyt first\)::step 2 \(kyt first\): POST \/api\/sandbox\/loans\/flow%0Asent: \{"action":"run_kyt"\}%0AIdempotency-Key: \S+%0Astatus%0A {2}- expected 200%0A {2}\+ received 409%0Areceived: \{[^\n]*"FLOW_CONFLICT"[^\n]*\}$/m
const ROW = /^\| wrong: Expects the wrong status \| ❌ failed \| \d+ ms \| step 2 \(kyt first\): status: expected 200, got 409 \| {2}\|$/m

/** A workspace with the failing scenario at checks,v2/wrong.json, and a summary file another step wrote to. */
async function makeWorkspace(): Promise<{ workspace: string; summary: string; env: Record<string, string> }> {
  const workspace = await tempDir()
  await mkdir(join(workspace, 'checks,v2'))
  await writeFile(join(workspace, 'checks,v2/wrong.json'), `\uFEFF${WRONG}`)
  const summary = join(workspace, 'step_summary.md')
  await writeFile(summary, EARLIER)
  return { workspace, summary, env: { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: workspace, GITHUB_STEP_SUMMARY: summary } }
}

const workflowLines = (text: string) => text.split('\n').filter((line) => line.startsWith('::'))

describe('sandbox run under GitHub Actions', () => {
  it('annotates the failed step at its file and line, and appends a summary to the step\'s summary file', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const { workspace, summary, env } = await makeWorkspace()
    const text = await runCli(['run', 'checks,v2/wrong.json'], { cwd: workspace, env })
    expect(text.code).toBe(1)
    expect(workflowLines(text.stdout)).toHaveLength(1)
    expect(text.stdout).toMatch(ANNOTATION)
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('0 passed, 1 failed')
    expect(text.stderr).toBe('sandbox: 1 of 1 scenario failed\n')
    const written = await readFile(summary, 'utf8')
    expect(written.startsWith(`${EARLIER}\n## sandbox run: 0 passed, 1 failed\n`)).toBe(true)
    expect(written).toMatch(ROW)
    expect(written).toContain('### Failures\n\n#### wrong\n\n```text\nstep 2 (kyt first): POST /api/sandbox/loans/flow\n')

    // --json: stdout stays one document; the command goes to stderr, which the runner reads too.
    const json = await runCli(['run', '--json', 'checks,v2/wrong.json'], { cwd: workspace, env })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ passed: 0, failed: 1 })
    expect(workflowLines(json.stderr)).toHaveLength(1)
    expect(json.stderr).toMatch(ANNOTATION)
    const twice = await readFile(summary, 'utf8')
    expect(twice.startsWith(written)).toBe(true)
    expect(twice.match(/^## sandbox run: /gm)).toHaveLength(2)
  })

  it('under the FORCE_COLOR=1 workflows set, colours the report but neither the annotation nor the summary', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const { summary, workspace, env } = await makeWorkspace()
    const result = await runCli(['run', 'checks,v2/wrong.json'], { cwd: workspace, env: { ...env, FORCE_COLOR: '1', NO_COLOR: '' } })
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/\u001b\[3\dm/)
    expect(workflowLines(result.stdout)).toEqual([expect.not.stringContaining('\u001b')])
    expect(result.stdout).toMatch(ANNOTATION)
    const written = await readFile(summary, 'utf8')
    expect(written).toMatch(ROW)
    expect(written).not.toContain('\u001b')
  })

  it('prints nothing for GitHub and writes no summary with --no-github-report, or without GITHUB_ACTIONS=true', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const { workspace, summary, env } = await makeWorkspace()
    for (const [args, extra] of [[['--no-github-report'], {}], [[], { GITHUB_ACTIONS: '' }], [['--json'], { GITHUB_ACTIONS: '1' }]] as const) {
      const result = await runCli(['run', ...args, 'checks,v2/wrong.json'], { cwd: workspace, env: { ...env, ...extra } })
      expect(result.code, args.join(' ')).toBe(1)
      expect(workflowLines(result.stdout + result.stderr), args.join(' ')).toEqual([])
    }
    expect(await readFile(summary, 'utf8')).toBe(EARLIER)
  })

  it('a file outside the workspace gets an annotation without file and line; a summary file that cannot be written is a warning', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const { workspace, env } = await makeWorkspace()
    const elsewhere = await tempDir()
    const result = await runCli(['run', 'checks,v2/wrong.json'], { cwd: workspace, env: { ...env, GITHUB_WORKSPACE: elsewhere, GITHUB_STEP_SUMMARY: elsewhere } })
    expect(result.code).toBe(1)
    expect(workflowLines(result.stdout)).toEqual([expect.stringMatching(/^::error title=wrong%3A step 2 \(kyt first\)::step 2 \(kyt first\): POST /)])
    expect(result.stderr).toBe(`sandbox: warning: cannot write the job summary to ${elsewhere} (GITHUB_STEP_SUMMARY): EISDIR: illegal operation on a directory, open '${elsewhere}'\nsandbox: 1 of 1 scenario failed\n`)
  })

  it('a run stopped on setup (a server that cannot be reached) gets one annotation with the message the run ends with', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const { workspace, summary, env } = await makeWorkspace()
    const result = await runCli(['run', '--base-url', `http://127.0.0.1:${await findClosedPort()}`, 'checks,v2/wrong.json'], { cwd: workspace, env })
    expect(result.code).toBe(2)
    const message = /^sandbox: (.*)$/m.exec(result.stderr)![1]!
    expect(message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+.*; is the server running\?/)
    expect(workflowLines(result.stdout)).toEqual([`::error title=wrong%3A the run stopped::${message}`])
    // The summary's Failed step column names the step the server could not be reached at.
    expect(await readFile(summary, 'utf8')).toMatch(/^\| wrong: Expects the wrong status \| ❌ failed \| \d+ ms \| step 1 \(read the config\): cannot reach http/m)
  })

  it('a scenario file that does not load is annotated at the line of the step or the JSON error, and exits 2 as without GitHub', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    // The commonest CI failure after editing a scenario: the PR's diff should show where.
    const { workspace, env } = await makeWorkspace()
    await writeFile(join(workspace, 'checks,v2/wrong.json'), WRONG.replace('"expect"', '"expcet"'))
    await writeFile(join(workspace, 'checks,v2/comma.json'), '{\n  "name": "n",\n  "description": "d",\n  "steps": [],\n}\n')
    const result = await runCli(['run', '--dir', 'checks,v2'], { cwd: workspace, env })
    expect(result.code).toBe(2)
    expect(workflowLines(result.stdout)).toEqual([
      '::error file=checks%2Cv2/comma.json,line=4,title=comma::not valid JSON (line 4, column 14): a comma before }; JSON allows no trailing comma',
      '::error file=checks%2Cv2/wrong.json,line=7,title=wrong%3A step 2::step 2: Unrecognized key: "expcet" (did you mean expect?)',
    ])
    expect(result.stderr).toContain('checks,v2/wrong.json: step 2: Unrecognized key: "expcet"')

    // --json: the annotations on stderr, stdout the one error document; none with --no-github-report.
    const json = await runCli(['run', '--json', '--dir', 'checks,v2'], { cwd: workspace, env })
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'SCENARIO' } })
    expect(workflowLines(json.stderr)).toHaveLength(2)
    const off = await runCli(['run', '--no-github-report', '--dir', 'checks,v2'], { cwd: workspace, env })
    expect(off.code).toBe(2)
    expect(workflowLines(off.stdout + off.stderr)).toEqual([])
  })
})
