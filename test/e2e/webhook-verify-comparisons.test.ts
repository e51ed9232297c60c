import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startNodeProcess } from '../helpers/cli.js'

afterEach(() => killAll())
const SECRET = 'whsec_e2e_comparison_secret_0123456789'
const ROOT = join(import.meta.dirname, '../..')
const startScript = (name: string) => startNodeProcess([join(ROOT, 'test/fixtures/receivers', name), '0'], /receiver ready: (\S+)/, { env: { WEBHOOK_SECRET: SECRET } })

// Receivers that check the timestamp and refuse every other forged case, but compare the signature
// leniently: only the signature-value cases can catch them, each one by name.
describe('sandbox webhook verify against lenient signature comparisons', () => {
  it('fails a receiver comparing with expected.startsWith(received), naming the empty and truncated values', async () => {
    const receiver = await startScript('prefix-match.mjs')
    const { code, stdout, stderr } = await runCli(['webhook', 'verify', receiver.url, '--secret', SECRET])
    expect(code).toBe(1)
    expect(stdout).toMatch(/✗ empty v1= value +expected non-2xx got 200/)
    expect(stdout).toMatch(/✗ truncated v1= value \(lowercase prefix\) +expected non-2xx got 200/)
    expect(stdout).toMatch(/✓ malformed v1= value +expected non-2xx got 401/)
    expect(stdout).toContain('mishandled: empty v1= value, truncated v1= value (lowercase prefix)\n')
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('23 passed, 2 failed')
    expect(stderr).toBe('sandbox: the receiver mishandled 2 of 25 deliveries\n')
  })

  it.each([
    ['skips the comparison when the value is empty', 'empty-skips-check.mjs', 'empty v1= value'],
    ['compares over the received length only, refusing an empty value', 'received-length-compare.mjs', 'truncated v1= value (lowercase prefix)'],
    ['ignores the label before the =', 'any-scheme-label.mjs', 'wrong scheme label (v0=)'],
  ])('fails a receiver that %s, naming that case alone', async (_what, script, failedCase) => {
    const receiver = await startScript(script)
    const { code, stdout } = await runCli(['webhook', 'verify', receiver.url, '--secret', SECRET, '--json'])
    expect(code).toBe(1)
    const report = JSON.parse(stdout)
    expect(report.cases.filter((c: { ok: boolean }) => !c.ok).map((c: { name: string }) => c.name)).toEqual([failedCase])
    expect(report).toMatchObject({ passed: 24, failed: 1 })
  })
})
