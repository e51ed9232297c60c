import { readdir, writeFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { killAll, runCli, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const KEY = 'sk_sandbox_e2e_idle_0123456789'
const OTHER = 'sk_sandbox_e2e_kept_0123456789'
const DAY = 24 * 3600_000

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-forget')

const loans = async (url: string, key: string) => (await (await fetch(`${url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })).json()).activeLoans as unknown[]
function createLoan(url: string, key: string) {
  return fetch(`${url}/api/sandbox/loans`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'loan-1' },
    body: JSON.stringify({ collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }),
  })
}

describe('sandbox serve --forget-idle-keys', () => {
  it('refuses a duration under an hour, a malformed one and a keys file, with exit 2 and what to do', async () => {
    const short = await runCli(['serve', '--port', '0', '--forget-idle-keys', '30m'])
    expect(short.code).toBe(2)
    expect(short.stderr).toContain('--forget-idle-keys: 30m is shorter than the 1h it takes at least')
    const bad = await runCli(['serve', '--port', '0'], { env: { SANDBOX_FORGET_IDLE_KEYS: '7 days' } })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('SANDBOX_FORGET_IDLE_KEYS: invalid duration "7 days"')
    const keysFile = join(await tempDir(), 'keys.json')
    expect((await runCli(['keys', 'create', '--keys', keysFile])).code).toBe(0)
    const withKeys = await runCli(['serve', '--port', '0', '--keys', keysFile, '--forget-idle-keys', '7d'])
    expect(withKeys.code).toBe(2)
    expect(withKeys.stderr).toContain('--forget-idle-keys forgets the keys of open mode; keys of --keys keep their state until "sandbox keys reset"')
  })

  it('says its setting at start, and after a restart forgets a key whose stored last use is older than the duration', async () => {
    const dataDir = await tempDir()
    const first = await startServe(['--port', '0', '--data-dir', dataDir, '--forget-idle-keys', '1d'])
    expect(first.output()).toMatch(/^sandbox ready: \S+ \(storage fs .+, keys open, rate limit 120\/60s, keys unused for 1d forgotten\)$/m)
    expect((await createLoan(first.url, KEY)).status).toBe(200)
    expect((await createLoan(first.url, OTHER)).status).toBe(200)
    expect(await first.stop('SIGTERM')).toBe(0)
    // As if KEY's last request came three days ago: the idle time counts from what storage holds.
    await writeFile(join(dataDir, 'keyuse', `${deriveKeyId(KEY)}~default`), JSON.stringify({ at: new Date(Date.now() - 3 * DAY).toISOString() }))
    const second = await startServe(['--port', '0', '--data-dir', dataDir, '--forget-idle-keys', '1d', '--json-logs'])
    const ready = JSON.parse(second.output().split('\n').find((line) => line.includes('"event":"ready"'))!)
    expect(ready).toMatchObject({ forget_idle_keys: '1d', forget_idle_keys_ms: DAY })
    await waitUntil(() => second.output().includes('"event":"keys_forgotten"'), 10_000, 'the keys_forgotten line')
    const line = JSON.parse(second.output().split('\n').find((text) => text.includes('"event":"keys_forgotten"'))!)
    expect(line).toMatchObject({ level: 'info', count: 1, forget_idle_keys: '1d' })
    expect(await loans(second.url, OTHER)).toHaveLength(1)
    expect(await loans(second.url, KEY)).toEqual([])
    expect(await second.stop('SIGTERM')).toBe(0)
    expect((await readdir(join(dataDir, 'session'))).map((name) => name.split('~')[0])).toEqual([deriveKeyId(OTHER)])
  })

  // The order that makes this hold (document first) is pinned by test/api/forget-idle-keys.test.ts,
  // with storage that fails between the steps: a kill rarely lands between two writes this close.
  it('after a kill -9 during a sweep, every key answers either its whole state or an empty one', async () => {
    const dataDir = await tempDir()
    const keys = Array.from({ length: 30 }, (_, i) => `sk_sandbox_e2e_crash_${i}_0123456789`)
    const first = await startServe(['--port', '0', '--data-dir', dataDir, '--forget-idle-keys', '1h', '--rate-limit', 'off', '--quiet'])
    for (const key of keys) {
      expect((await createLoan(first.url, key)).status).toBe(200)
      // Past 16 records: batch files beside each document, which a half-done forget would leave pointed at.
      for (let i = 0; i < 18; i++) {
        const answer = await fetch(`${first.url}/api/sandbox/partner`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `p${i}-${key}` }, body: JSON.stringify({ name: `Acme ${i}` }) })
        expect(answer.status).toBe(200)
      }
    }
    expect(await first.stop('SIGTERM')).toBe(0)
    const old = JSON.stringify({ at: new Date(Date.now() - 3 * DAY).toISOString() })
    for (const name of await readdir(join(dataDir, 'keyuse'))) await writeFile(join(dataDir, 'keyuse', name), old)
    const sweeping = await startServe(['--port', '0', '--data-dir', dataDir, '--forget-idle-keys', '1h', '--quiet'])
    // The sweep starts with the server: killed as soon as it listens, most keys are not done yet.
    expect(await sweeping.stop('SIGKILL')).toBe(null)
    const after = await startServe(['--port', '0', '--data-dir', dataDir, '--rate-limit', 'off', '--quiet'])
    let kept = 0
    for (const key of keys) {
      const state = await fetch(`${after.url}/api/sandbox/state`, { headers: { authorization: `Bearer ${key}` } })
      expect(state.status).toBe(200)
      const body = await state.json() as { loans: { activeLoans: unknown[] }; partner: { profile: { name: string } } }
      if (body.loans.activeLoans.length === 1) kept++
      // Whole (the loan and the last profile) or empty (neither), never one without the other.
      expect([[1, 'Acme 17'], [0, 'Sandbox Partner']]).toContainEqual([body.loans.activeLoans.length, body.partner.profile.name])
      // The oldest record, moved to a batch file: replayed from it (whole), or new (empty).
      const replay = await fetch(`${after.url}/api/sandbox/partner`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `p0-${key}` }, body: JSON.stringify({ name: 'Acme 0' }) })
      expect(replay.status).toBe(200)
      expect((await replay.json() as { idempotency_replayed?: boolean }).idempotency_replayed ?? false).toBe(body.loans.activeLoans.length === 1)
      const answer = await fetch(`${after.url}/api/sandbox/partner`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body: JSON.stringify({ name: 'After' }) })
      expect(answer.status).toBe(200)
    }
    expect(await after.stop('SIGTERM')).toBe(0)
    // Killed mid-sweep on this machine: some keys forgotten, others not (25-29 of 30 kept); not asserted, as a slower machine may kill sooner.
    expect(kept).toBeLessThanOrEqual(keys.length)
  }, 120_000)
})
