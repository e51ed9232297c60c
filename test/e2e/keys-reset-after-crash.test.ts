import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * `sandbox keys reset` after a `kill -9` of serve, before the next start: the killed server's
 * last changes are only in its journal, which the next start replays.
 */
afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-reset-after-crash')

const filesOf = async (dir: string) => (await readdir(dir, { recursive: true })).map(String)

describe('keys reset on the data dir of a killed server', () => {
  it('leaves no data of the old session for the next start to bring back', async () => {
    const dir = await tempDir()
    const dataDir = join(dir, 'data')
    const keysFile = join(dir, 'keys.json')
    const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim().split('\n')[0]!
    const serveArgs = ['--port', '0', '--data-dir', dataDir, '--keys', keysFile, '--quiet', '--rate-limit', 'off']
    const serve = await startServe(serveArgs)
    const answer = await fetch(`${serve.url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'crash-1' },
      body: JSON.stringify({ collateral_btc: 0.01, loan_amount: 100 }),
    })
    expect(answer.status).toBe(200)
    // At once, before a checkpoint (250 ms on) writes the session's file: the change is in the journal only.
    await serve.stop('SIGKILL')
    expect((await filesOf(dataDir)).some((name) => name.startsWith('journal-'))).toBe(true)
    const oldSession = (JSON.parse(await readFile(keysFile, 'utf8')) as { keys: Array<{ session_id: string }> }).keys[0]!.session_id

    const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--data-dir', dataDir])
    expect([reset.code, reset.stderr]).toEqual([0, ''])
    const ofOldSession = (names: string[]) => names.filter((name) => name.includes(oldSession))
    expect(ofOldSession(await filesOf(dataDir))).toEqual([])

    const again = await startServe(serveArgs)
    expect(await again.stop()).toBe(0)
    expect(ofOldSession(await filesOf(dataDir))).toEqual([])
  }, 60_000)
})
