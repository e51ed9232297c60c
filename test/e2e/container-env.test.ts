import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, readdir } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil } from '../helpers/cli.js'
import { AS_INIT, AS_STRANGER, INIT_UNAVAILABLE, STRANGER_UNAVAILABLE } from '../helpers/container.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * The CLI in the process environments of containers and CI runners, reproduced directly: a user
 * with no passwd entry (`docker run --user 12345`) and the CLI as PID 1 (a container's entrypoint
 * without --init). Needs root and util-linux; with SANDBOX_TEST_CONTAINER=required a missing tool
 * fails the run instead of skipping (CI leaves it unset: see .ci/run).
 */
for (const reason of [STRANGER_UNAVAILABLE, INIT_UNAVAILABLE]) {
  if (process.env.SANDBOX_TEST_CONTAINER === 'required' && reason) throw new Error(`SANDBOX_TEST_CONTAINER=required but ${reason}`)
}

const inits = new Set<ChildProcess>()
const servers = new Set<{ server: Server; sockets: Set<Socket> }>()
afterEach(() => {
  killAll()
  // unshare passes no signal on: killing the namespace's PID 1 (SIGKILL always reaches it) ends it all.
  for (const child of inits) {
    try {
      const pid = findInitPid(child)
      if (pid) process.kill(pid, 'SIGKILL')
    } catch { /* gone already */ }
    child.kill('SIGKILL')
  }
  inits.clear()
  for (const { server, sockets } of servers) {
    for (const socket of sockets) socket.destroy()
    server.close()
  }
  servers.clear()
})
const tempDir = useTempDirs('sandbox-container')

/** A fresh directory the stranger may write in, as a container's working directory. */
async function openDir(): Promise<string> {
  const dir = await tempDir()
  await chmod(dir, 0o777)
  return dir
}

describe.skipIf(STRANGER_UNAVAILABLE !== '')(`as a user with no passwd entry and no HOME${STRANGER_UNAVAILABLE ? ` (skipped: ${STRANGER_UNAVAILABLE})` : ''}`, () => {
  const asStranger = { wrapper: AS_STRANGER }

  it('keys, serve and logs work on their defaults in the working directory', async () => {
    const cwd = await openDir()
    const created = await runCli(['keys', 'create', '--label', 'ci'], { ...asStranger, cwd })
    expect(created).toMatchObject({ code: 0, stderr: expect.stringContaining('added to .sandbox/keys.json') })
    const key = /sk_sandbox_\w+/.exec(created.stdout)![0]
    expect((await runCli(['keys', 'list'], { ...asStranger, cwd })).stdout).toContain(' ci ')
    const [command, ...wrapperArgs] = AS_STRANGER
    const serve = await startNodeProcess([...wrapperArgs, process.execPath, BIN, 'serve', '--port', '0', '--keys', '.sandbox/keys.json'], /sandbox ready: (\S+)/, { command, cwd })
    expect(serve.output()).toContain('storage fs .sandbox')
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })
    expect(answer.status).toBe(200)
    expect(await serve.stop()).toBe(0)
    const logs = await runCli(['logs', '--json'], { ...asStranger, cwd })
    expect(logs).toMatchObject({ code: 0, stderr: '' })
    expect(logs.stdout).toContain('"path":"/api/sandbox/config"')
  })

  it('a ~ path there is an exit-2 error that says to set HOME, not a stack', async () => {
    const cwd = await openDir()
    // Named by where it came from: the flag, or the variable, which is on no command line to look for.
    const expected = (path: string) => `sandbox: cannot expand ${path}: no home directory (HOME is not set, and user 12345 has no entry in the user database); set HOME or give the path without ~\n`
    expect(await runCli(['serve', '--port', '0', '--data-dir', '~/data'], { ...asStranger, cwd })).toMatchObject({ code: 2, stdout: '', stderr: expected('--data-dir ~/data') })
    expect(await runCli(['keys', 'list'], { ...asStranger, cwd, env: { SANDBOX_KEYS_FILE: '~/keys.json' } })).toMatchObject({ code: 2, stderr: expected('SANDBOX_KEYS_FILE ~/keys.json') })
    expect(await runCli(['logs'], { ...asStranger, cwd, env: { SANDBOX_DATA_DIR: '~/.sandbox' } })).toMatchObject({ code: 2, stderr: expected('SANDBOX_DATA_DIR ~/.sandbox') })
    expect(await runCli(['run', '--json', '--junit', '~/r.xml', 'loan-flow'], { ...asStranger, cwd })).toMatchObject({ code: 2, stderr: expected('--junit ~/r.xml') })
  })
})

/** The host's pid of the PID 1 that unshare started, once it has started it. */
function findInitPid(child: ChildProcess): number | undefined {
  try {
    const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0])
    return pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

interface InitProcess {
  stdout(): string
  stderr(): string
  /** Sends SIGNAL to the CLI (PID 1 in its namespace) from outside, as `docker stop` does. */
  signal(signal: NodeJS.Signals): void
  /** The exit code, or 'running' if it has not exited within MS. */
  exitWithin(ms: number): Promise<number | null | 'running'>
}

/** `sandbox ARGS` as PID 1 of a PID namespace of its own. */
async function startAsInit(args: string[]): Promise<InitProcess> {
  const child = spawn(AS_INIT[0]!, [...AS_INIT.slice(1), process.execPath, BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } })
  inits.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => { stdout += chunk })
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  await waitUntil(() => findInitPid(child) !== undefined, 5000, 'the namespace\'s PID 1')
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    signal: (signal) => process.kill(findInitPid(child)!, signal),
    exitWithin: (ms) => Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), ms))]),
  }
}

/** A TCP server that accepts connections and never answers (a stuck server or redis). */
async function startSilentServer(): Promise<{ port: number; connections(): number }> {
  const sockets = new Set<Socket>()
  let count = 0
  const server = createServer((socket) => {
    count += 1
    sockets.add(socket)
  })
  servers.add({ server, sockets })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, connections: () => count }
}

describe.skipIf(INIT_UNAVAILABLE !== '')(`as PID 1, where the kernel drops signals nobody handles${INIT_UNAVAILABLE ? ` (skipped: ${INIT_UNAVAILABLE})` : ''}`, () => {
  it('run stops on SIGINT (docker run -it, Ctrl+C) with 130, and --json on SIGTERM (docker stop) with 143 and one document', async () => {
    const silent = await startSilentServer()
    const text = await startAsInit(['run', '--base-url', `http://127.0.0.1:${silent.port}`, 'loan-flow'])
    await waitUntil(() => silent.connections() === 1, 10_000, 'the run\'s first request')
    text.signal('SIGINT')
    expect(await text.exitWithin(5000)).toBe(130)

    const json = await startAsInit(['run', '--json', '--base-url', `http://127.0.0.1:${silent.port}`, 'loan-flow'])
    await waitUntil(() => silent.connections() === 2, 10_000, 'the run\'s first request')
    json.signal('SIGTERM')
    expect(await json.exitWithin(5000)).toBe(143)
    expect(JSON.parse(json.stdout())).toEqual({ error: { code: 'INTERRUPTED', message: 'stopped by SIGTERM before the report was complete' } })
  })

  it('serve still starting (a redis that does not answer) stops on SIGTERM with 143, not after its 12 s of retries', async () => {
    const silent = await startSilentServer()
    const serve = await startAsInit(['serve', '--port', '0', '--storage', `redis://127.0.0.1:${silent.port}/0`])
    await waitUntil(() => silent.connections() >= 1, 10_000, 'serve connecting to redis')
    serve.signal('SIGTERM')
    expect(await serve.exitWithin(3000)).toBe(143)
    expect(serve.stdout()).toBe('')
  })

  it('serve, once ready, stops on SIGTERM as everywhere: exit 0 with its state kept', async () => {
    const dataDir = await tempDir()
    const serve = await startAsInit(['serve', '--port', '0', '--data-dir', dataDir])
    await waitUntil(() => serve.stdout().includes('sandbox ready: '), 10_000, 'the ready line')
    const url = /sandbox ready: (\S+)/.exec(serve.stdout())![1]
    const key = 'sk_sandbox_pid_one_0000000000'
    const created = await fetch(`${url}/api/sandbox/loans`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'pid-one-1', 'content-type': 'application/json' }, body: JSON.stringify({ collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }) })
    expect(created.status).toBe(200)
    serve.signal('SIGTERM')
    expect(await serve.exitWithin(5000)).toBe(0)
    expect(serve.stdout()).toContain('sandbox stopped (SIGTERM)')
    const again = await startAsInit(['serve', '--port', '0', '--data-dir', dataDir])
    await waitUntil(() => again.stdout().includes('sandbox ready: '), 10_000, 'the ready line')
    const loans = await fetch(`${/sandbox ready: (\S+)/.exec(again.stdout())![1]}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await loans.json()) as { activeLoans: unknown[] }).activeLoans).toHaveLength(1)
    again.signal('SIGTERM')
    expect(await again.exitWithin(5000)).toBe(0)
  })
})

describe('in a pipeline', () => {
  it('serve whose log reader goes away (serve | head -1) stops as on SIGTERM: exit 0, lock released, journal checkpointed', async () => {
    const dataDir = await tempDir()
    const serve = await startServe(['--port', '0', '--data-dir', dataDir])
    const exited = new Promise<number | null>((resolve) => serve.child.once('exit', resolve))
    serve.child.stdout!.destroy()
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: 'Bearer sk_sandbox_pipe_reader_gone_00' } })
    expect(answer.status).toBe(200)
    expect(await exited).toBe(0)
    expect((await readdir(dataDir)).filter((name) => name === 'server.lock' || name.startsWith('journal-'))).toEqual([])
  })
})
