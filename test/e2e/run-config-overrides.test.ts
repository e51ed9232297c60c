import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// The shipped scenarios are written for fixtures/config.json. Against a server a partner started
// with their own terms (`serve --config`), each failed step names a limit; the run also says why.

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-config')

describe('sandbox run against a serve --config', () => {
  it('says above the summary which of the server\'s figures differ from the config the shipped scenarios are written for', async () => {
    const dir = await tempDir()
    const config = join(dir, 'terms.json')
    await writeFile(config, '{"limits":{"loan_amount":{"min":500}},"risk":{"max_ltv_percent":70},"currencies":["USDT","USDC"]}')
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet', '--config', config])
    const note = 'the server\'s config is not the one the shipped scenarios are written for (fixtures/config.json): risk.max_ltv_percent 70 (written for 50), limits.loan_amount.min 500 (written for 100), currencies ["USDT","USDC"] (written for ["USDT"]); a failure may come from it: run them against a sandbox serve without --config, or write scenarios for these terms'
    const text = await runCli(['run', 'direct-loan', '--base-url', serve.url])
    expect(text.code).toBe(1)
    expect(text.stdout).toContain('loan_amount must be at least 500 (limits.loan_amount.min).')
    const lines = text.stdout.split('\n')
    expect(lines.indexOf(note)).toBe(lines.indexOf('Failed scenarios:') - 2)
    const json = await runCli(['run', 'direct-loan', '--base-url', serve.url, '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ failed: 1, api_version: null })
    expect(json.stderr).toContain(`sandbox: ${note}\n`)
    // A shipped scenario that passes there needs no note, and costs no request more.
    const passed = await runCli(['run', 'partner-profile', '--base-url', serve.url, '--json'])
    expect(passed.code).toBe(0)
    expect(passed.stderr).toBe('')
    await serve.stop()
  })

  it('adds nothing against a server on the default config, where a failure is the scenario\'s own', async () => {
    const dir = await tempDir()
    const own = join(dir, 'own.json')
    await writeFile(own, JSON.stringify({ name: 'my own', description: 'a scenario of the partner\'s own that fails', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 201 } }] }))
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet'])
    const text = await runCli(['run', own, '--base-url', serve.url])
    expect(text.code).toBe(1)
    expect(text.stdout).not.toContain('written for')
    await serve.stop()
  })
})
