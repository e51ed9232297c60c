import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil } from '../helpers/cli.js'
import { PTY_UNAVAILABLE, killPtys, runInPty } from '../helpers/pty.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// SIGHUP is what a closed terminal window or a dropped ssh session sends. Node's default for it
// is to die at once: serve left its lock behind and lost the request log of its last half second.
afterEach(() => {
  killAll()
  killPtys()
})
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

/** Serve in a pty whose shell passes the terminal's SIGHUP on and writes down how serve ended. */
async function startServeInTerminal(dataDir: string, args: string[]) {
  const status = `${dataDir}.status`
  // As an interactive shell does when its terminal closes: it passes the SIGHUP on to the command
  // it runs (the kernel sends it to the session's leader only), then it is told how it ended.
  const session = runInPty(['serve', '--port', '0', '--data-dir', dataDir, ...args], {
    wrap: (cli) => `trap 'kill -HUP $pid' HUP; ${cli} & pid=$!; wait $pid; wait $pid; echo $? > ${status}`,
  })
  await session.waitFor(/sandbox ready: http:\/\/\S+ /, { timeoutMs: 20_000 })
  const url = /sandbox ready: (http:\/\/\S+) /.exec(session.text())![1]!
  return {
    url,
    /** Closes the terminal; resolves with serve's exit status once it ended. */
    async closeTerminal(): Promise<string> {
      session.closeTerminal()
      await waitUntil(() => existsSync(status), 30_000, 'serve to end after its terminal closed')
      return (await readFile(status, 'utf8')).trim()
    },
  }
}

/** Stops a serve left running on DATA_DIR (outside script's process group: the pty's session is its own). */
async function killLeftServe(dataDir: string): Promise<void> {
  const lock = await readFile(join(dataDir, 'server.lock'), 'utf8').catch(() => '')
  const pid = Number(/"pid":\s*(\d+)/.exec(lock)?.[1])
  if (pid) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
}

describe.skipIf(PTY_UNAVAILABLE)('serve in a terminal that is closed', () => {
  it('stops as on SIGHUP: lock released, request log flushed, and ends by SIGHUP (129), not by an abort', async () => {
    const dataDir = await tempDir()
    const serve = await startServeInTerminal(dataDir, ['--quiet'])
    try {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await (await fetch(`${serve.url}/api/sandbox/config`, { headers })).json() as { request_id: string }).request_id)
      // 134 was node aborting (SIGABRT) as it tried to restore a terminal that is gone.
      expect(await serve.closeTerminal()).toBe('129')
      expect(existsSync(join(dataDir, 'server.lock'))).toBe(false)
      expect(await readLoggedIds(dataDir)).toEqual(ids)
    } finally {
      await killLeftServe(dataDir)
    }
  }, 60_000)

  it('started with setsid (its own session, no SIGHUP), goes on answering once the terminal its lines go to is gone', async () => {
    const dataDir = await tempDir()
    const session = runInPty(['serve', '--port', '0', '--data-dir', dataDir], { wrap: (cli) => `setsid ${cli} & wait` })
    try {
      await session.waitFor(/sandbox ready: http:\/\/\S+ /, { timeoutMs: 20_000 })
      const url = /sandbox ready: (http:\/\/\S+) /.exec(session.text())![1]!
      session.closeTerminal()
      // Each request line now fails to write (EIO): the first one ended serve as an unexpected
      // error, with its lock left and the request log unwritten.
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const answer = await fetch(`${url}/api/sandbox/config`, { headers })
        expect(answer.status).toBe(200)
        ids.push((await answer.json() as { request_id: string }).request_id)
      }
      const lock = await readFile(join(dataDir, 'server.lock'), 'utf8')
      process.kill(Number(/"pid":\s*(\d+)/.exec(lock)![1]), 'SIGTERM')
      await waitUntil(() => !existsSync(join(dataDir, 'server.lock')), 20_000, 'serve to stop on SIGTERM')
      expect(await readLoggedIds(dataDir)).toEqual(ids)
    } finally {
      await killLeftServe(dataDir)
    }
  }, 60_000)

  it('finishes a request in flight though its lines can no longer be written', async () => {
    const dataDir = await tempDir()
    const faults = `${dataDir}.faults.json`
    await writeFile(faults, JSON.stringify({ rules: [{ method: 'GET', path: '/api/sandbox/loans', fault: 'latency', ms: 2000 }] }))
    const serve = await startServeInTerminal(dataDir, ['--faults', faults])
    try {
      const slow = fetch(`${serve.url}/api/sandbox/loans`, { headers })
      await new Promise((resolve) => setTimeout(resolve, 200))
      // Answered after the slow one was sent: the server has it in hand.
      await fetch(`${serve.url}/api/sandbox/config`, { headers })
      const closed = serve.closeTerminal()
      // Its request line, and the stop's, fail to write (EIO): that ended the stop as an
      // unexpected error before storage was flushed.
      expect((await slow).status).toBe(200)
      expect(await closed).toBe('129')
      expect(existsSync(join(dataDir, 'server.lock'))).toBe(false)
      expect(await readLoggedIds(dataDir)).toHaveLength(2)
    } finally {
      await killLeftServe(dataDir)
    }
  }, 60_000)
})
