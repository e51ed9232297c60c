import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandbox, createSandboxClient, listenSandbox } from '../../src/index.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const makeTempDir = useTempDirs('sandbox-close-listeners')
const KEY = 'sk_sandbox_close_listeners_key_1'

describe('sandbox.close() with its listener still open (a test suite that forgot listener.close())', () => {
  it('closes the listener too: nothing answers on its port, and the data dir it gave back is not written to', async () => {
    const dataDir = join(await makeTempDir(), 'data')
    const sandbox = await createSandbox({ storage: 'fs', dataDir })
    const listener = await listenSandbox(sandbox)
    const client = createSandboxClient({ baseUrl: listener.url, apiKey: KEY, retries: 0 })
    await client.loanFlow({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 10_000, loan_currency: 'USDT' })

    await sandbox.close()
    const filesAtClose = await readdir(dataDir, { recursive: true })
    // Before, the closed sandbox still served, and confirmed this step with a 200.
    await expect(client.loanFlow({ action: 'confirm_btc', tx_hash: 'tx_after_close', confirmations: 2 })).rejects.toThrow(/ECONNREFUSED/)
    expect(await readdir(dataDir, { recursive: true })).toEqual(filesAtClose)
    // The suite's own listener.close() afterwards is harmless.
    await listener.close()
  })

  it('refuses listenSandbox and sandbox.fetch once closed, and a listenSandbox still starting when close() was called', async () => {
    const sandbox = await createSandbox()
    const starting = listenSandbox(sandbox)
    const refused = expect(starting).rejects.toThrow('listenSandbox: this sandbox is closed (its close() was called); create another with createSandbox()')
    await sandbox.close()
    await refused
    await expect(listenSandbox(sandbox)).rejects.toThrow(/this sandbox is closed/)
    await expect(sandbox.fetch(new Request('http://127.0.0.1/api/sandbox/state', { headers: { authorization: `Bearer ${KEY}` } }))).rejects.toThrow(/sandbox\.fetch: this sandbox is closed/)
  })
})
