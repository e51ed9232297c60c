import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// A run that cannot start (a broken scenario file, an unknown id or tag) exits 2. A CI reads its
// --junit file all the same: a workspace kept from an earlier job (Jenkins, a self-hosted runner)
// still held that job's report, all passed, and a clean one had none to show.

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-junit-start-error')
const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml)
const CONFIG_OK = JSON.stringify({ name: 'Config answers', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }] })

describe('sandbox run --junit when the run cannot start', () => {
  it('a broken scenario file: the report, an earlier one replaced, holds an error at that file naming the mistake', { timeout: 60_000 }, async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'checks'))
    await writeFile(join(dir, 'checks', 'config-ok.json'), CONFIG_OK)
    const junit = join(dir, 'reports', 'sandbox.xml')
    expect((await runCli(['run', '--dir', 'checks', '--junit', junit], { cwd: dir, env: { CI: 'true', GITHUB_ACTIONS: '' } })).code).toBe(0)
    expect(parse(await readFile(junit, 'utf8')).testsuites).toMatchObject({ tests: '1', failures: '0', errors: '0' })

    await writeFile(join(dir, 'checks', 'typo.json'), JSON.stringify({ name: 'x', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/state' }, expcet: { status: 200 } }] }))
    const result = await runCli(['run', '--dir', 'checks', '--junit', junit], { cwd: dir, env: { CI: 'true', GITHUB_ACTIONS: '' } })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('step 1: Unrecognized key: "expcet" (did you mean expect?)')
    const xml = await readFile(junit, 'utf8')
    expect(XMLValidator.validate(xml)).toBe(true)
    const report = parse(xml)
    expect(report.testsuites).toMatchObject({ tests: '1', failures: '0', errors: '1' })
    expect(report.testsuites.testsuite).toMatchObject({ tests: '1', failures: '0', errors: '1', skipped: '0' })
    const testcase = report.testsuites.testsuite.testcase
    expect(testcase).toMatchObject({ classname: 'scenarios.typo', error: { type: 'ScenarioError', message: 'step 1: Unrecognized key: "expcet" (did you mean expect?)' } })
    expect(testcase['system-out']).toBe(`file: ${join('checks', 'typo.json')}`)
  })

  it('an unknown scenario id or tag, a bad flag value: one error saying which', { timeout: 60_000 }, async () => {
    const dir = await tempDir()
    const junit = join(dir, 'sandbox.xml')
    const unknown = await runCli(['run', 'loan_flow', '--junit', junit], { cwd: dir, env: { CI: 'true', GITHUB_ACTIONS: '' } })
    expect(unknown.code).toBe(2)
    const byId = parse(await readFile(junit, 'utf8')).testsuites.testsuite
    expect(byId).toMatchObject({ tests: '1', errors: '1' })
    expect(byId.testcase).toMatchObject({ classname: 'scenarios', name: 'sandbox run', error: { type: 'ScenarioError' } })
    expect(byId.testcase.error.message).toMatch(/^unknown scenario loan_flow \(did you mean loan-flow\?\)/)

    const tag = await runCli(['run', '--tag', 'webhook', '--junit', junit], { cwd: dir, env: { CI: 'true', GITHUB_ACTIONS: '' } })
    expect(tag.code).toBe(2)
    const byTag = parse(await readFile(junit, 'utf8')).testsuites.testsuite
    expect(byTag.testcase.error).toMatchObject({ type: 'UsageError' })
    expect(byTag.testcase.error.message).toMatch(/^no scenario has the tag webhook \(did you mean webhooks\?\)/)

    // A bad flag value, once the flags are read: a quoting slip in the CI file.
    expect((await runCli(['run', '--base-url', 'http://x y', '--junit', junit], { cwd: dir, env: { CI: 'true' } })).code).toBe(2)
    expect(parse(await readFile(junit, 'utf8')).testsuites.testsuite.testcase.error).toMatchObject({ type: 'UsageError' })
  })
})
