import { formatJson } from './json-text.js'
import { onStopSignals, toSignalExitCode } from './stop-signals.js'
import type { SandboxListener } from '../server/listen.js'
import type { Sandbox } from '../server/sandbox-types.js'

/** How long a stop may wait for what is in flight before serve says so. */
const STOPPING_NOTICE_MS = 1000

/** What a stop of serve ends: the timers first, then the sandbox, which closes the listener before its storage. */
export interface ServeStopTargets {
  json: boolean
  idleGc: { stop(): void }
  youngCap: { stop(): void }
  listener: Pick<SandboxListener, 'close'>
  sandbox: Pick<Sandbox, 'close'>
}

/**
 * Stops serve on SIGINT, SIGTERM, SIGHUP (its terminal closed) or a log reader gone, waiting for what is in flight; a second
 * signal while stopping exits at once.
 */
export function stopOnSignals(targets: ServeStopTargets): void {
  const stop = createServeStop(targets)
  onStopSignals((signal) => void stop(signal))
  // A log reader gone (`serve | head`, a dead `tee`) ends the server as a signal would, not
  // mid-request with the lock left behind (main.ts leaves this EPIPE to us).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') void stop('SIGPIPE')
  })
}

/**
 * The longest a stop waits: the 10 s for what is in flight, then storage's last writes. A storage
 * that stopped answering (a redis paused, a hung network disk) made each of those writes wait out
 * its own timeout, one after another: 29 s on a paused redis, past the 10 s a supervisor gives.
 */
export const STOP_CAP_MS = 15_000

/** The stop of serve: the first call stops, within capMs; a call while stopping exits at once. */
export function createServeStop({ json, idleGc, youngCap, listener, sandbox }: ServeStopTargets, capMs = STOP_CAP_MS): (signal: NodeJS.Signals) => Promise<void> {
  let stopping = false
  return async (signal) => {
    // A log reader gone while stopping is no call to stop at once.
    if (stopping) return signal === 'SIGPIPE' ? undefined : forceStop(signal, json)
    stopping = true
    idleGc.stop()
    youngCap.stop()
    // A slow receiver or client can hold the stop for up to 10 s: say why, and how not to wait.
    const slow = setTimeout(() => writeStopping(json, signal), STOPPING_NOTICE_MS)
    slow.unref()
    const cap = setTimeout(() => {
      clearTimeout(slow)
      giveUpStop(json, capMs)
    }, capMs)
    cap.unref()
    // The sandbox's close() closes the listener itself, after ending the waits of latency faults:
    // closed first, the listener waited out its 10 s cap for such a request, then cut it.
    // A stop whose last storage writes failed (a full disk) lost nothing the journal holds, but
    // did not flush: said, and exit 1, so that a supervisor or CI job sees it.
    const failed = await sandbox.close().then(() => undefined, (error: Error) => error)
    // Closed by now (the sandbox's close closes it), or its failure is what `failed` says.
    await listener.close().catch(() => {})
    clearTimeout(slow)
    clearTimeout(cap)
    if (failed) {
      if (json) process.stdout.write(`${formatJson({ level: 'error', event: 'storage_error', message: failed.message })}\n`)
      else process.stderr.write(`storage error: ${failed.message}\n`)
    }
    process.stdout.write(json ? `${formatJson({ level: 'info', event: 'stopped', signal })}\n` : `sandbox stopped (${signal})\n`)
    process.exit(failed ? 1 : 0)
  }
}

/** A stop past its cap: storage did not answer; exit 1 without its last writes, as a kill would. */
function giveUpStop(json: boolean, capMs: number): void {
  const message = `stopped after ${capMs / 1000} s without storage's last writes: storage did not answer (a redis paused or unreachable, a hung disk); what was answered is kept, and deliveries in flight may be sent again after a restart`
  if (json) process.stdout.write(`${formatJson({ level: 'error', event: 'storage_error', message })}\n`)
  else process.stderr.write(`storage error: ${message}\n`)
  process.exit(1)
}

/**
 * How to stop at once, for the signal that began the stop: a supervisor or `docker stop` sent
 * SIGTERM, and "press Ctrl+C" is no advice to whoever reads its log.
 */
const STOP_NOW: Partial<Record<NodeJS.Signals, string>> = { SIGINT: 'press Ctrl+C again', SIGTERM: 'send SIGTERM again', SIGHUP: 'send SIGHUP again' }

function writeStopping(json: boolean, signal: NodeJS.Signals): void {
  const message = `waiting for requests and webhook deliveries in flight (up to 10 s); ${STOP_NOW[signal] ?? 'send SIGINT or SIGTERM'} to stop now`
  // The signal, as the stopped and forced_stop lines name it: a log reader sees what began the stop.
  process.stdout.write(json ? `${formatJson({ level: 'info', event: 'stopping', signal, message })}\n` : `stopping: ${message}\n`)
}

/** A second signal while stopping: exit at once, as a signal's exit code (130 for SIGINT, 129 for SIGHUP). */
function forceStop(signal: NodeJS.Signals, json: boolean): never {
  const message = 'stopped without waiting: a request in flight may not have been answered, and a webhook delivery in flight may be sent again after a restart'
  // With --json-logs on stdout, as every other event: a log collector reads only that stream.
  if (json) process.stdout.write(`${formatJson({ level: 'warn', event: 'forced_stop', signal, message })}\n`)
  else process.stderr.write(`sandbox ${message} (${signal})\n`)
  process.exit(toSignalExitCode(signal))
}
