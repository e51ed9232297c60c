import { mkdir, readdir, statfs, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { TMPFS_UNAVAILABLE, useSmallTmpfs } from '../helpers/small-tmpfs.js'
import { encodeRecords } from '../../src/storage/journal-format.js'

/** `sandbox serve` on a data dir whose disk really fills up (a small tmpfs). */
const tmpfs = useSmallTmpfs('sandbox-serve-full')
afterEach(() => killAll())

const LOAN = { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }

function post(url: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${url}/api/sandbox/loans/flow`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `idem-${Math.random()}` },
    body: JSON.stringify(body),
  })
}

describe.skipIf(TMPFS_UNAVAILABLE !== '')(`serve on a full disk${TMPFS_UNAVAILABLE ? ` (skipped: ${TMPFS_UNAVAILABLE})` : ''}`, () => {
  it('answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED, prints one line saying to free space, and takes writes again once there is space', async () => {
    const mount = await tmpfs('2m')
    const dataDir = join(mount, 'data')
    await mkdir(dataDir)
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet', '--rate-limit', 'off'])
    const { bavail, bsize } = await statfs(mount)
    const filler = join(mount, 'filler')
    await writeFile(filler, Buffer.alloc(Number(bavail) * Number(bsize)))
    const statuses: Array<[number, string]> = []
    for (let i = 0; i < 40; i++) {
      const answer = await post(serve.url, `sk_sandbox_full_disk_key_${String(i).padStart(4, '0')}`, LOAN)
      statuses.push([answer.status, ((await answer.json()) as { error_code?: string }).error_code ?? ''])
    }
    expect(new Set(statuses.map(([status, code]) => `${status} ${code}`))).toEqual(new Set(['500 SANDBOX_API_KEY_DATABASE_REQUIRED']))
    const lines = serve.output().split('\n').filter((line) => line.startsWith('storage error:'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/the disk of the data dir is full: free space on it/)

    // The request log is read beside the server on the full disk: how one sees what failed.
    const logs = await runCli(['logs', '--data-dir', dataDir, '--json'])
    expect([logs.code, logs.stderr]).toEqual([0, ''])

    await unlink(filler)
    const after = await post(serve.url, 'sk_sandbox_full_disk_key_after', LOAN)
    expect(after.status).toBe(200)
    expect(await serve.stop()).toBe(0)
    expect((await readdir(dataDir, { recursive: true })).map(String).filter((name) => name.endsWith('.tmp') || name.startsWith('journal-'))).toEqual([])
  })

  it('does not start on a full disk, saying to free space on it', async () => {
    const mount = await tmpfs('1m')
    const dataDir = join(mount, 'data')
    await mkdir(dataDir)
    const { bavail, bsize } = await statfs(mount)
    await writeFile(join(mount, 'filler'), Buffer.alloc(Number(bavail) * Number(bsize)))
    const { code, stderr } = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
    expect(code).toBe(2)
    expect(stderr).toMatch(/is not a writable directory \(ENOSPC\); its disk is full: free space on it/)
  })

  it('does not start when the journal a crash left cannot be replayed for want of space, saying to free space and that the journal is kept', async () => {
    const mount = await tmpfs('4m')
    const dataDir = join(mount, 'data')
    await mkdir(dataDir)
    // A killed server's journal: its documents need about its size again once written to their files.
    const records = Array.from({ length: 4 }, (_, i) => ({ key: `session:${'k'.repeat(31)}${i}:default`, value: JSON.stringify({ filler: 'x'.repeat(300_000) }) }))
    const journal = join(dataDir, 'journal-999999-000001.log')
    await writeFile(journal, encodeRecords(records, true))
    const { bavail, bsize } = await statfs(mount)
    // Room for the start's own small files, not for the documents.
    await writeFile(join(mount, 'filler'), Buffer.alloc(Number(bavail) * Number(bsize) - 64 * 1024))
    const { code, stderr } = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
    expect([code, stderr]).toEqual([2, `sandbox: cannot replay the journal in ${dataDir}: its disk is full (ENOSPC): free space on it and start serve again; the journal is kept, so no change is lost\n`])
    expect((await readdir(dataDir)).filter((name) => name.startsWith('journal-'))).toEqual(['journal-999999-000001.log'])

    await unlink(join(mount, 'filler'))
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet'])
    expect(await serve.stop()).toBe(0)
    expect((await readdir(dataDir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    expect((await readdir(join(dataDir, 'session'))).sort()).toEqual(records.map(({ key }) => key.slice('session:'.length).replaceAll(':', '~')).sort())
  })
})
