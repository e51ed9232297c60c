import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess } from '../helpers/cli.js'
import { AS_STRANGER, STRANGER_UNAVAILABLE } from '../helpers/container.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * A server lock whose pid is now another user's process (root's, seen by uid 12345), which the
 * server may not signal (EPERM): a pid reused by an unrelated process, or a killed server not
 * yet reaped, is taken over as for the server's own user; a live server of that pid is not.
 */
const tempDir = useTempDirs('sandbox-lock-other-user')
const others: ChildProcess[] = []
afterEach(() => {
  killAll()
  for (const child of others.splice(0)) child.kill()
})

function readStat(pid: number): { state: string; start: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state: fields[0]!, start: Number(fields[19]) }
}

async function dataDirWithLock(fields: object): Promise<string> {
  const cwd = await tempDir()
  await chmod(cwd, 0o755)
  const dataDir = join(cwd, 'data')
  await mkdir(dataDir)
  await chmod(dataDir, 0o777)
  const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim()
  await writeFile(join(dataDir, 'server.lock'), JSON.stringify({ token: 'root-server', host: hostname(), started_at: 'then', boot_id: bootId, ...fields }), { mode: 0o666 })
  return dataDir
}

function serveAsStranger(dataDir: string) {
  return startNodeProcess([...AS_STRANGER.slice(1), process.execPath, BIN, 'serve', '--port', '0', '--data-dir', dataDir], /sandbox ready: (\S+)/, { command: AS_STRANGER[0] })
}

describe.skipIf(STRANGER_UNAVAILABLE !== '')(`a lock naming another user's process${STRANGER_UNAVAILABLE ? ` (skipped: ${STRANGER_UNAVAILABLE})` : ''}`, () => {
  it('is taken over when that pid now belongs to an unrelated process, and refused while it is the server that wrote it', async () => {
    const other = spawn('sleep', ['60'])
    others.push(other)
    const { start } = readStat(other.pid!)

    const held = await dataDirWithLock({ pid: other.pid, pid_start: start })
    const refused = await runCli(['serve', '--port', '0', '--data-dir', held], { wrapper: AS_STRANGER })
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining(`is in use by another sandbox server (pid ${other.pid}, since then)`)])

    const reused = await dataDirWithLock({ pid: other.pid, pid_start: start - 1 })
    const serve = await serveAsStranger(reused)
    expect(JSON.parse(await readFile(join(reused, 'server.lock'), 'utf8')).token).not.toBe('root-server')
    expect(await serve.stop()).toBe(0)
  }, 60_000)

  it('is taken over when that process was killed and is not yet reaped (a zombie)', async () => {
    // The child exits after its parent has become `sleep`, which never reaps it: a zombie until
    // the parent ends.
    const parent = spawn('sh', ['-c', '(sleep 0.3) & echo $!; exec sleep 60'])
    others.push(parent)
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk) => resolve(String(chunk).trim()))))
    await vi.waitFor(() => expect(readStat(zombie).state).toBe('Z'), { timeout: 10_000, interval: 20 })
    const dataDir = await dataDirWithLock({ pid: zombie, pid_start: readStat(zombie).start })
    const serve = await serveAsStranger(dataDir)
    expect(JSON.parse(await readFile(join(dataDir, 'server.lock'), 'utf8')).token).not.toBe('root-server')
    expect(await serve.stop()).toBe(0)
  }, 60_000)
})
