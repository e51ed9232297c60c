import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { AS_STRANGER, STRANGER_UNAVAILABLE } from '../helpers/container.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-read-only')

// Another user's data dir (root's, read by uid 12345), as a read-only mount would be: `logs`
// only reads, while `keys reset`, which deletes sessions, needs to write.
describe.skipIf(STRANGER_UNAVAILABLE !== '')(`a data dir readable but not writable${STRANGER_UNAVAILABLE ? ` (skipped: ${STRANGER_UNAVAILABLE})` : ''}`, () => {
  it('logs reads it; keys reset still refuses it', async () => {
    const cwd = await tempDir()
    await chmod(cwd, 0o755)
    const dataDir = join(cwd, 'dd')
    await mkdir(dataDir)
    const serve = await startServe(['--port', '0', '--storage', 'fs', '--data-dir', dataDir])
    await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: 'Bearer sk_sandbox_read_only_0123456789' } })
    expect(await serve.stop()).toBe(0)
    await chmod(dataDir, 0o755)
    const logs = await runCli(['logs', '--data-dir', dataDir], { wrapper: AS_STRANGER, cwd })
    expect([logs.code, logs.stderr]).toEqual([0, ''])
    expect(logs.stdout).toContain('/api/sandbox/config')
    const reset = await runCli(['keys', 'reset', 'sk_sandbox_read_only_0123456789', '--data-dir', dataDir], { wrapper: AS_STRANGER, cwd })
    expect([reset.code, reset.stderr]).toEqual([2, expect.stringContaining(`data dir ${dataDir} is not a writable directory (EACCES)`)])
  }, 60_000)
})
