import { access, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/** `rm -rf .sandbox` while `serve` runs, as one might to start again from an empty state. */
const tempDir = useTempDirs('sandbox-data-dir-deleted')
afterEach(() => killAll())

function post(url: string): Promise<Response> {
  return fetch(`${url}/api/sandbox/loans`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk_sandbox_data_dir_deleted_0001', 'content-type': 'application/json', 'idempotency-key': `idem-${Math.random()}` },
    body: JSON.stringify({ collateral_btc: 0.01, loan_amount: 100 }),
  })
}

describe('a data dir deleted while serve runs', () => {
  it('refuses writes with a line saying the data dir is gone and to restart serve, not an unexplained ENOENT', async () => {
    const dataDir = join(await tempDir(), 'data')
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet', '--rate-limit', 'off'])
    expect((await post(serve.url)).status).toBe(200)
    // Checkpointed: no journal is open when the dir goes. The request's log entry is written up to
    // 500 ms after it, into a new journal: waited for in its file too, or a journal opened after
    // the check took the next POST (a file unlinked with its dir still takes writes: a 200).
    const journals = async () => (await readdir(dataDir)).filter((name) => name.startsWith('journal-'))
    const logged = async () => (await readdir(join(dataDir, 'reqlog')).catch(() => [])).some((name) => name !== 'head')
    for (let tries = 0; ((await journals()).length > 0 || !(await logged())) && tries < 250; tries++) await new Promise((resolve) => setTimeout(resolve, 40))
    expect([await journals(), await logged()]).toEqual([[], true])
    // Retried: a checkpoint may add a file while the tree is removed (ENOTEMPTY), as `rm -rf` can fail then too.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })

    const answer = await post(serve.url)
    expect([answer.status, ((await answer.json()) as { error_code: string }).error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
    await waitUntil(() => serve.output().includes('storage error:'), 10_000, 'the storage error line')
    const line = serve.output().split('\n').find((text) => text.startsWith('storage error:'))
    expect(line).toContain(`data dir ${dataDir} no longer exists (deleted or moved while serve ran): stop serve and start it again`)
    expect(await serve.stop()).toBe(0)
  }, 60_000)

  it('is not made again by the writes of the deleted state that were not yet in their files; the stop says they are lost', async () => {
    const dataDir = join(await tempDir(), 'data')
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet', '--rate-limit', 'off'])
    expect((await post(serve.url)).status).toBe(200)
    // At once: the write is in the journal, its file not yet written by a checkpoint.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
    let status = 200
    for (let tries = 0; status === 200 && tries < 100; tries++) {
      status = (await post(serve.url)).status
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toBe(500)
    await expect(access(dataDir)).rejects.toThrow(/ENOENT/)
    expect(await serve.stop()).toBe(1)
    expect(serve.output()).toContain(`storage error: data dir ${dataDir} no longer exists (deleted or moved while serve ran): the writes answered since could not be kept; the next start begins from an empty data dir`)
    await expect(access(dataDir)).rejects.toThrow(/ENOENT/)
  }, 60_000)
})
