import { copyFile, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { createRequestLog } from '../../src/server/request-log.js'
import { journaledFsDriver } from '../../src/storage/index.js'

/**
 * `sandbox logs` on the data dir of a server killed with -9 (not started again): the requests
 * of its last moments are in its journal only, which the next start replays into files.
 */
const tempDir = useTempDirs('sandbox-logs-after-crash')

const entry = (id: string) => ({ request_id: id, at: new Date().toISOString(), key: 'sk_sandbox_crash…0001', method: 'POST', path: '/api/sandbox/loans', status: 200, error_code: null, idempotency_key: null, duration_ms: 1 })

describe('sandbox logs after a kill -9 of serve', () => {
  it('shows the requests that are still only in the killed server\'s journal', async () => {
    const live = await tempDir()
    // Checkpoints far off: what a server under load leaves when it is killed.
    const storage = createStorage({ driver: journaledFsDriver({ base: live, checkpointDelayMs: 60_000 }) })
    const log = createRequestLog(storage)
    log.record('k1', entry('req_first'))
    await log.flush()
    log.record('k1', entry('req_last'))
    await log.flush()
    // The data dir as the kill leaves it: the journals, and no file written from them.
    const killed = await tempDir()
    const journals = (await readdir(live)).filter((name) => name.startsWith('journal-'))
    expect(journals).not.toEqual([])
    for (const name of journals) await copyFile(join(live, name), join(killed, name))
    await log.close()
    await storage.dispose()
    await mkdir(join(killed, 'reqlog'))

    const { code, stdout, stderr } = await runCli(['logs', '--data-dir', killed, '--json'])
    expect([code, stderr]).toEqual([0, ''])
    expect(stdout.trim().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { request_id: string }).request_id)).toEqual(['req_first', 'req_last'])
  }, 60_000)
})
