import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError } from '../../src/client/index.js'
import { formatRetryWait } from '../../src/cli/run-progress.js'
import type { RetryWait } from '../../src/scenarios/connection-step.js'
import { describeLostAttempts } from '../../src/scenarios/connection-step.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import type { FaultsConfig } from '../../src/faults/faults-schema.js'
import { LOAN, newKey } from '../helpers/api.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { describeRunStop } from '../../src/cli/run-stop.js'
import { loadScenarios } from '../../src/scenarios/load-scenarios.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// serve --faults answers a 502 or 504 with a proxy's HTML page, as a gateway in front of a server
// that is down would: the client, run and trigger told it as "from a proxy in front of the server
// (not the sandbox's own answer)", sending a partner rehearsing with --faults to look for a proxy.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })
const tempDir = useTempDirs('sandbox-injected-gateway')

async function serveWithFaults(faults: FaultsConfig): Promise<string> {
  const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {}, faults })
  const listener = await listenSandbox(sandbox)
  cleanups.push(async () => { await listener.close(); await sandbox.close() })
  return listener.url
}

describe('a 502 or 504 page that serve --faults injected', () => {
  it('is retried as a proxy\'s page is, and the retry line says serve --faults injected it', async () => {
    const baseUrl = await serveWithFaults({ rules: [{ method: 'POST', path: '/api/sandbox/loans', fault: 'status', status: 502, first_attempt: true }] })
    const waits: RetryWait[] = []
    const client = createSandboxClient({ baseUrl, apiKey: newKey('injected'), onRetryWait: (wait) => waits.push(wait) })
    await client.createLoan(LOAN, { idempotencyKey: 'injected-502' })
    expect(waits).toHaveLength(1)
    expect(waits[0]).toMatchObject({ reason: 'gateway_error', status: 502, injected: true })
    expect(formatRetryWait(waits[0]!, 10_000)).toBe('502 page injected by serve --faults (as a proxy in front of a server that is down answers): waiting 250 ms, then POST /api/sandbox/loans again with the same Idempotency-Key (attempt 2 of 4)')
    expect(describeLostAttempts([waits[0]!, waits[0]!], new Error('x'), 10_000)).toMatch(/^3 attempts, 1\. 502 injected by serve --faults; 2\. 502 injected by serve --faults; 3\. /)
  })

  it('that every attempt got ends in an error that names serve --faults, not a proxy', async () => {
    const baseUrl = await serveWithFaults({ rules: [{ method: 'GET', path: '/api/sandbox/loans', fault: 'status', status: 504 }] })
    const client = createSandboxClient({ baseUrl, apiKey: newKey('injected'), retries: 1 })
    const error = await client.listLoans().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxApiError)
    expect((error as Error).message).toBe('GET /api/sandbox/loans answered 504: a proxy\'s page injected by serve --faults (a status rule), not a proxy in front of the server')
  })

  it('that stops a sandbox run says serve --faults answered it, and does not ask whether the server is running', async () => {
    const baseUrl = await serveWithFaults({ rules: [{ method: 'GET', path: '/api/sandbox/loans', fault: 'status', status: 502 }] })
    const dir = await tempDir()
    await writeFile(join(dir, 'faulty-read.json'), JSON.stringify({ name: 'faulty-read', description: 'a read the 502 rule faults', steps: [{ name: 'loans', request: { method: 'GET', path: '/api/sandbox/loans' }, expect: { status: 200 } }] }))
    const report = await runScenarios(await loadScenarios(dir), { baseUrl, apiKey: newKey('injected'), transport: { retries: 1 } })
    const stop = describeRunStop(report, { baseUrl })
    expect(stop?.message).toBe('GET /api/sandbox/loans: serve --faults answered 502 2 times with a proxy\'s page (a status rule), as a proxy in front of a server that is down would; not a proxy of yours')
  })

  it('is told apart from a real proxy\'s page, which stays "from a proxy in front of the server"', () => {
    const wait = { reason: 'gateway_error', status: 502, ms: 250, attempt: 1, maxAttempts: 4, request: { method: 'GET', path: '/api/sandbox/config' } } as RetryWait
    expect(formatRetryWait(wait, 10_000)).toBe('502 from a proxy in front of the server (not the sandbox\'s own answer): waiting 250 ms, then GET /api/sandbox/config again (attempt 2 of 4)')
  })
})
