import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess, waitUntil } from '../helpers/cli.js'
import { AS_STRANGER, STRANGER_UNAVAILABLE } from '../helpers/container.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * A data dir the server may write in, whose `session/` it may not (left by a server run as root,
 * `sudo sandbox serve`): requests are answered from the journal, and the checkpoints that would
 * write their files fail.
 */
const tempDir = useTempDirs('sandbox-checkpoint-denied')
afterEach(() => killAll())

describe.skipIf(STRANGER_UNAVAILABLE !== '')(`serve where its checkpoints are denied${STRANGER_UNAVAILABLE ? ` (skipped: ${STRANGER_UNAVAILABLE})` : ''}`, () => {
  it('says so while it runs, not only at the stop, and the next start says how to fix it', async () => {
    const cwd = await tempDir()
    await chmod(cwd, 0o755)
    const dataDir = join(cwd, 'data')
    await mkdir(dataDir)
    await chmod(dataDir, 0o777)
    // root's, as a `sudo sandbox serve` leaves it.
    await mkdir(join(dataDir, 'session'))
    await writeFile(join(dataDir, 'storage-format'), '{"format":1,"written_by":"partner-sandbox 0.1.0"}\n', { mode: 0o644 })
    const args = [...AS_STRANGER.slice(1), process.execPath, BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--quiet', '--rate-limit', 'off']
    const serve = await startNodeProcess(args, /sandbox ready: (\S+)/, { command: AS_STRANGER[0], cwd })
    const answer = await fetch(`${serve.url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_sandbox_checkpoint_denied_01', 'content-type': 'application/json', 'idempotency-key': 'denied-1' },
      body: JSON.stringify({ collateral_btc: 0.01, loan_amount: 100 }),
    })
    expect(answer.status).toBe(200)
    await waitUntil(() => serve.output().includes('storage error:'), 15_000, 'a storage error line while serving')
    const line = serve.output().split('\n').find((text) => text.startsWith('storage error:'))!
    expect(line).toContain(`cannot write the files of the data dir ${dataDir} (EACCES)`)
    expect(line).toContain('make the data dir and everything in it writable by the user serve runs as')
    expect(await serve.stop()).toBe(1)

    const again = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { wrapper: AS_STRANGER, cwd })
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(`cannot replay the journal in ${dataDir}: permission denied (EACCES): make the data dir and everything in it writable by the user serve runs as`)
    expect(again.stderr).toContain('the journal is kept, so no change is lost')
  }, 60_000)
})
