import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// SIGHUP is what a closed terminal window or a dropped ssh session sends. Node's default for it
// is to die at once: serve left its lock behind and lost the request log of its last half second.
afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-sighup')

const KEY = 'sk_sandbox_sighup_test_key_0001'
const headers = { authorization: `Bearer ${KEY}` }

/** The request ids `sandbox logs` lists for DATA_DIR. */
async function readLoggedIds(dataDir: string): Promise<string[]> {
  const logs = await runCli(['logs', '--data-dir', dataDir, '--json'])
  expect(logs.code).toBe(0)
  return logs.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).request_id as string)
}

describe('SIGHUP stops a long-running command as SIGTERM does', () => {
  it('serve: flushes the request log, releases the data dir\'s lock, says it stopped, exit 0', async () => {
    const dataDir = await tempDir()
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet'])
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await (await fetch(`${serve.url}/api/sandbox/config`, { headers })).json() as { request_id: string }).request_id)
    // At once: the request log is written every 500 ms, and the last ones are the stop's to write.
    expect(await serve.stop('SIGHUP')).toBe(0)
    expect(serve.output()).toMatch(/sandbox stopped \(SIGHUP\)\n$/)
    expect(existsSync(join(dataDir, 'server.lock'))).toBe(false)
    expect(await readLoggedIds(dataDir)).toEqual(ids)
  })

  it('webhook listen: says it stopped, exit 0', async () => {
    const listener = await startNodeProcess([BIN, 'webhook', 'listen', '--port', '0'], /webhook listener ready: (\S+)/)
    expect(await listener.stop('SIGHUP')).toBe(0)
    expect(listener.output()).toMatch(/webhook listener stopped \(SIGHUP\)\n$/)
  })

  it('logs --follow: stops following, exit 0', async () => {
    const dataDir = await tempDir()
    const serve = await startServe(['--port', '0', '--data-dir', dataDir, '--quiet'])
    const { request_id: id } = await (await fetch(`${serve.url}/api/sandbox/config`, { headers })).json() as { request_id: string }
    expect(await serve.stop()).toBe(0)
    const follower = spawn(process.execPath, [BIN, 'logs', '--follow', '--data-dir', dataDir], { env: { ...process.env, NO_COLOR: '1' } })
    const exited = new Promise((resolve) => follower.once('exit', (code, signal) => resolve(signal ?? code)))
    // The logged request shown: its signal handlers are in place before its first line.
    let stdout = ''
    follower.stdout.on('data', (chunk) => { stdout += chunk })
    try {
      await waitUntil(() => stdout.includes(id), 20_000, 'the follower\'s first line')
      follower.kill('SIGHUP')
      expect(await exited).toBe(0)
    } finally {
      if (follower.exitCode === null && follower.signalCode === null) follower.kill('SIGKILL')
    }
  }, 60_000)

  it('run --watch: stops its server, says it stopped, exit 0', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'tiny.json'), JSON.stringify({ name: 'Tiny', description: 'reads the config', steps: [{ name: 'config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }] }))
    const watch = await startNodeProcess([BIN, 'run', '--watch', '--dir', dir], /in-process server on (http:\/\/127\.0\.0\.1:\d+)/)
    await waitUntil(() => /watching .+ for changes/.test(watch.output()), 20_000, 'the first round')
    expect(await watch.stop('SIGHUP')).toBe(0)
    expect(watch.output()).toMatch(/\nwatch stopped \(SIGHUP\)\n$/)
  }, 60_000)
})
