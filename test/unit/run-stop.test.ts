import { describe, expect, it } from 'vitest'
import { describeRunStop } from '../../src/cli/run-stop.js'
import type { RunReport, ScenarioReport, StepReport } from '../../src/scenarios/index.js'

const answered: StepReport = { index: 0, name: 'config', kind: 'request', method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, duration_ms: 5, ok: true, failures: [] }
const refused = 'cannot reach http://127.0.0.1:4010/api/sandbox/state (ECONNREFUSED) after 4 attempts'
const lost = (index: number, message = refused): StepReport => ({
  index, name: 'state', kind: 'request', method: 'GET', path: '/api/sandbox/state', status: null, error_code: null, duration_ms: 700, ok: false,
  failures: [{ field: 'connection', expected: 'an answer from the server', actual: null, message }],
})
const stopped = (steps: StepReport[], error: string): RunReport => {
  const scenario: ScenarioReport = { id: 'one', name: 'One', file: 'one.json', tags: [], status: 'failed', duration_ms: 800, requests: 1, steps, error, connection_error: true }
  return { base_url: 'http://127.0.0.1:4010', started_server: false, api_version: null, started_at: '2026-11-27T00:00:00.000Z', duration_ms: 800, passed: 0, failed: 1, skipped: 0, requests: 1, scenarios: [scenario] }
}

describe('the message a run stopped on an unreachable server ends with', () => {
  it('asks whether the server is running only when it has answered no step of the run', () => {
    const never = describeRunStop(stopped([lost(0)], refused), {})
    expect(never?.message).toBe(`${refused}; is the server running? (sandbox serve; --wait 30s if it is still starting; or leave out --base-url to start one in-process)`)
    expect(describeRunStop(stopped([lost(0)], refused), { waitForServerMs: 5000, wait: '5s' })?.message).toContain('nothing answered within --wait 5s;')
  })

  it('says a server that answered earlier steps stopped taking connections, or did not answer in time', () => {
    const down = describeRunStop(stopped([answered, lost(1)], `step 2 (state): ${refused}`), { waitForServerMs: 5000, wait: '5s' })
    expect(down?.message).toBe(`step 2 (state): ${refused}; the server answered earlier steps of this run, then stopped taking connections: it may have crashed or restarted (its log says why)`)
    const slow = 'cannot reach http://127.0.0.1:4010/api/sandbox/state (timed out after 4 attempts of 0.5 s each)'
    expect(describeRunStop(stopped([answered, lost(1, slow)], `step 2 (state): ${slow}`), {})?.message)
      .toBe(`step 2 (state): ${slow}; the server answered earlier steps of this run, then not this one in time: it may be stuck or overloaded (its log says), or this request needs a longer --timeout`)
  })
})
