import { describe, expect, it } from 'vitest'
import { parseScenario, runScenarios } from '../../src/scenarios/index.js'

// `sandbox run --wait` against a port fetch refuses before connecting (6665, one of the fetch
// standard's blocked ports): no server there can ever be reached, so waiting changes nothing.

const config = parseScenario('config.json', JSON.stringify({ name: 'config', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))

describe('run --wait on a blocked port', () => {
  it('ends the wait at once, and the run stops saying fetch refuses the port, not after the whole wait', async () => {
    // A wait longer than the test's 20 s: a run that waited it out fails the test.
    const report = await runScenarios([config], { baseUrl: 'http://127.0.0.1:6665', waitForServerMs: 120_000 })
    expect(report.scenarios[0]).toMatchObject({ connection_error: true })
    expect(report.scenarios[0]!.error).toContain('fetch refuses port 6665 before connecting')
  })
})
