import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'

afterEach(() => {
  killAll()
})

const KEY = 'sk_sandbox_verbose_0123456789abcdef'
const sentLines = (text: string) => text.split('\n').filter((line) => /^ {6}> (GET|POST|DELETE) http/.test(line))

describe('sandbox run --verbose', () => {
  it('prints every request the run sends and every answer, with the key masked, drop_answer steps included', async () => {
    const { code, stdout } = await runCli(['run', 'loan-flow', 'dropped-connection-retry', '--verbose', '--api-key', KEY])
    expect(code).toBe(0)
    expect(stdout).not.toContain(KEY)
    expect(stdout).toContain('      > authorization: Bearer sk_sandbox_verb…cdef\n')
    expect(stdout).toMatch(/\n {6}> POST http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/loans\/flow\n/)
    expect(stdout).toMatch(/\n {6}> \{"action":"start_collateral_transfer",/)
    expect(stdout).toMatch(/\n {6}< x-request-id: req_\w+\n/)
    expect(stdout).toMatch(/\n {6}< idempotent-replayed: true\n/)
    // One `>` line per request the summary counts: none left out, none twice.
    const requests = Number(/, (\d+) requests in /.exec(stdout)?.[1])
    expect(sentLines(stdout)).toHaveLength(requests)
  })

  it('goes to stderr under --json, leaving stdout one report; without --verbose nothing of it is printed', async () => {
    const verbose = await runCli(['run', 'loan-flow', '--verbose', '--json'])
    expect(verbose.code).toBe(0)
    const report = JSON.parse(verbose.stdout) as { requests: number }
    expect(sentLines(verbose.stderr)).toHaveLength(report.requests)
    const quiet = await runCli(['run', 'loan-flow'])
    expect(quiet.code).toBe(0)
    expect(sentLines(quiet.stdout)).toEqual([])
    expect(quiet.stdout).not.toContain('      < ')
  })
})
