import { mkdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { killAll, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-stop-unflushed')
afterEach(() => killAll())

const KEY = 'sk_sandbox_stop_unflushed_key_0001'
const LOAN = { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

describe('serve stopped when its last storage writes fail', () => {
  it('says the journal keeps what was answered, exits 1, and the next start has it', async () => {
    const dataDir = await tempDir()
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet'])
    const post = (body: object, key: string) => fetch(`${serve.url}/api/sandbox/loans/flow`, { method: 'POST', headers: { ...headers, 'idempotency-key': key }, body: JSON.stringify(body) })
    expect((await post(LOAN, 'start')).status).toBe(200)
    // Once the key's document is checkpointed (and held in the server's cache), a directory takes
    // the place of its file: its checkpoints then fail, as on a full disk, while the journal takes
    // the next write.
    const file = join(dataDir, 'session', `${deriveKeyId(KEY)}~default`)
    await expect.poll(() => stat(file).then((found) => found.isFile(), () => false)).toBe(true)
    await rm(file)
    await mkdir(file)
    expect((await post({ action: 'confirm_btc', tx_hash: 'tx-1', confirmations: 2 }, 'confirm')).status).toBe(200)

    expect(await serve.stop()).toBe(1)
    expect(serve.output()).toMatch(/storage error: the last checkpoint in .* could not be written \(.*\): every acknowledged write is kept in its journal, which the next start replays\nsandbox stopped \(SIGTERM\)/)

    await rm(file, { recursive: true })
    const again = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet'])
    const state = await (await fetch(`${again.url}/api/sandbox/loans`, { headers })).json() as { draft: { status: string } | null }
    expect(state.draft?.status).toBe('collateral_confirmed')
    expect(await again.stop()).toBe(0)
  })
})
