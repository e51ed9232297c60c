import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const KEY = 'sk_sandbox_pnp_key_0123456789'
/** Yarn PnP's FileHandle, without sync() and datasync(), in every process the CLI starts. */
const PNP_ENV = { NODE_OPTIONS: `--import=${join(import.meta.dirname, '../helpers/yarn-pnp-file-handle.mjs')}` }

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-pnp')

// `yarn sandbox serve` in a Yarn PnP project (nodeLinker pnp, the default of Yarn 2+): each write
// failed with "sandbox: unexpected error / Error: Method not implemented. at FileHandle.sync".
describe('under Yarn PnP, whose FileHandle has no sync() or datasync()', () => {
  it('serve keeps its state on fs storage, across a restart', async () => {
    const dataDir = await tempDir()
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], { env: PNP_ENV })
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': 'pnp-1' }
    const started = await fetch(`${serve.url}/api/sandbox/loans/flow`, { method: 'POST', headers, body: JSON.stringify({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }) })
    expect(started.status).toBe(200)
    expect(await serve.stop()).toBe(0)
    expect(serve.output()).not.toMatch(/unexpected error|not implemented/i)

    const again = await startServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], { env: PNP_ENV })
    const loans = await (await fetch(`${again.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${KEY}` } })).json() as { draft: { collateral_btc: number } | null }
    expect(loans.draft?.collateral_btc).toBe(0.5)
    expect(await again.stop()).toBe(0)
  }, 60_000)

  it('keys create writes the keys file', async () => {
    const dir = await tempDir()
    const { code, stdout, stderr } = await runCli(['keys', 'create', '--label', 'ci'], { cwd: dir, env: PNP_ENV })
    expect(code).toBe(0)
    expect(stderr).toContain('added to .sandbox/keys.json as "ci"')
    const key = /sk_sandbox_\w+/.exec(stdout)![0]
    expect(JSON.parse(await readFile(join(dir, '.sandbox/keys.json'), 'utf8')).keys.map((record: { key: string }) => record.key)).toEqual([key])
  })
})
