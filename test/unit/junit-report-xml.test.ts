import { describe, expect, it } from 'vitest'
import type { RunReport } from '../../src/scenarios/report-types.js'
import { formatJunitReport } from '../../src/scenarios/junit-report.js'

function runOf(name: string, error: string): RunReport {
  return {
    base_url: 'http://127.0.0.1:4010',
    started_server: true,
    api_version: '0.3.0',
    started_at: '2026-11-27T06:58:01.234Z',
    duration_ms: 1500,
    passed: 0,
    failed: 1,
    skipped: 0,
    requests: 1,
    scenarios: [{ id: 'loan-flow', name, file: 'scenarios/loan-flow.json', tags: [], status: 'failed', duration_ms: 1500, requests: 1, steps: [], error }],
  }
}

describe('the JUnit report', () => {
  it('drops characters XML 1.0 cannot carry, even escaped, from names and messages', () => {
    const xml = formatJunitReport(runOf('bell\u0007 name', 'server said \u001b[31mno\u001b[0m'))
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/) // eslint-disable-line no-control-regex
    expect(xml).toContain('name="bell name"')
    expect(xml).toContain('message="server said [31mno[0m"')
  })

  it('gives the suite\'s timestamp without fraction or zone, as junit-10.xsd wants it', () => {
    expect(formatJunitReport(runOf('a', 'b'))).toContain('timestamp="2026-11-27T06:58:01">')
  })
})
