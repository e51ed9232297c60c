import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

/** The built CLI, as `npx sandbox` runs it. */
export const BIN = join(import.meta.dirname, '../../bin/sandbox.js')
const running = new Set<ChildProcess>()

/**
 * Timeout for a test that runs the CLI many times in a row: each run starts node (0.5-2 s on a
 * busy 2-core machine), and a dozen runs went past the default 20 s.
 */
export const MANY_RUNS_TIMEOUT_MS = 60_000

/** Kills every process these helpers started (call in afterEach/afterAll). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
}

/**
 * Runs `sandbox ARGS` to completion (`nodeArgs` go to node, e.g. `--import` of a test hook;
 * `shell`, sh commands run first in the process that then becomes node, e.g. `ulimit -n 256 &&`;
 * `wrapper`, a command that runs node, e.g. `setpriv ...` for another user).
 */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string | Buffer; cwd?: string; nodeArgs?: string[]; shell?: string; wrapper?: string[] } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const command = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), BIN, ...args]
    const [file, argv] = options.shell === undefined ? [command[0]!, command.slice(1)] : ['sh', ['-c', `${options.shell} exec "$0" "$@"`, ...command]]
    const child = spawn(file, argv, { env: { ...process.env, NO_COLOR: '1', ...options.env }, cwd: options.cwd })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    // A command that exits before reading its stdin (a usage error) closes the pipe: the write's
    // EPIPE is no failure of the test, and unhandled it failed the whole run.
    child.stdin.on('error', () => {})
    child.stdin.end(options.input ?? '')
    child.on('close', (code) => {
      running.delete(child)
      resolve({ code, stdout, stderr })
    })
  })
}

/** A `sandbox serve` child process. */
export interface ServeProcess {
  url: string
  child: ChildProcess
  output(): string
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `sandbox serve ARGS` and resolves once it printed its readiness line (text or JSON). */
export function startServe(args: string[], options: { env?: Record<string, string> } = {}): Promise<ServeProcess> {
  return startNodeProcess([BIN, 'serve', ...args], /(?:sandbox ready: |"event":"ready","url":")([^\s"]+)/, options)
}

/** A node process that prints a ready line with its URL (a receiver script, `webhook listen`). */
export function startNodeProcess(args: string[], ready: RegExp, options: { env?: Record<string, string>; command?: string; cwd?: string } = {}): Promise<ServeProcess> {
  const child = spawn(options.command ?? process.execPath, args, { env: { ...process.env, NO_COLOR: '1', ...options.env }, cwd: options.cwd })
  running.add(child)
  let out = ''
  child.stdout!.on('data', (chunk) => { out += chunk })
  child.stderr!.on('data', (chunk) => { out += chunk })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running.delete(child)
    resolve(code)
  }))
  return new Promise((resolve, reject) => {
    const onData = () => {
      const match = ready.exec(out)
      if (!match) return
      child.stdout!.off('data', onData)
      resolve({ url: match[1]!, child, output: () => out, stop: async (signal = 'SIGTERM') => { child.kill(signal); return exited } })
    }
    child.stdout!.on('data', onData)
    void exited.then((code) => reject(new Error(`${args.join(' ')} exited with ${code} before ready:\n${out}`)))
  })
}

/** Polls until `check` passes (for output of another process), failing after `timeoutMs`. */
export async function waitUntil(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Runs SCRIPT (an ES module) in a node process of its own and waits for it to end by itself,
 * with no `process.exit`: a timer or socket a library left behind keeps it up, and after
 * `cutoffMs` the test fails with its output. killAll stops it.
 */
export async function runScriptToEnd(script: string, cutoffMs: number): Promise<{ output: string; exitCode: number | null }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  let exitCode: number | null | undefined
  child.once('exit', (code) => {
    running.delete(child)
    exitCode = code
  })
  await waitUntil(() => exitCode !== undefined, cutoffMs, 'the script to end by itself')
    .catch((error: Error) => { throw new Error(`${error.message}; its output:\n${output}`) })
  return { output, exitCode: exitCode! }
}
