import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { InvalidArgumentError, Option, type Command } from 'commander'
import { CliError } from '../cli-error.js'
import { escapeControls } from '../../text/escape-controls.js'
import { formatJson } from '../json-text.js'
import { addJsonOption, addKeysFileOption, addStorageOptions, resolveKeysFile, type StorageFlags } from '../options.js'
import { readStorageSetting } from '../storage-setting.js'
import { onFirstStopSignal } from '../stop-signals.js'
import type * as Output from '../output.js'
import type { RequestLogEntry } from '../../server/request-log.js'

interface LogsFlags extends StorageFlags {
  key?: string
  keys?: string
  follow?: boolean
  tail?: number
  json?: boolean
}

const POLL_MS = 500

/** `--tail`'s value: a whole number of requests, 0 included (with --follow: only new ones). */
function parseTail(value: string): number {
  const count = /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : NaN
  if (!Number.isSafeInteger(count)) throw new InvalidArgumentError('a whole number of requests, 0 or more (e.g. --tail 50)')
  return count
}

function formatEntry(out: typeof Output, entry: RequestLogEntry): string {
  const { chalk, colorStatus } = out
  const parts = [
    chalk.dim(entry.at),
    entry.key ?? '-',
    entry.method.padEnd(6),
    entry.path,
    colorStatus(entry.status),
    entry.error_code ?? '-',
    `${Math.round(entry.duration_ms)}ms`,
    entry.request_id,
    // The client chose it: HTTP lets bytes 0x80-0xff through, C1 controls such as CSI (0x9b) included.
    entry.idempotency_key ? `idem=${escapeControls(entry.idempotency_key)}` : '',
    entry.idempotency_replayed ? chalk.cyan('replayed') : '',
    entry.fault ? `fault=${entry.fault}` : '',
    entry.ignored_fields ? chalk.yellow(`ignored=${escapeControls(out.formatFieldNames(entry.ignored_fields))}`) : '',
  ]
  return parts.filter((part) => part !== '').join(' ')
}

/**
 * What `--key` names, as the log can filter on it: a full key; its masked form, as `sandbox logs`
 * and `sandbox keys list` show it; or, through the keys file, a unique prefix of a registered key.
 */
async function resolveKeyFilter(flags: LogsFlags): Promise<{ apiKey?: string; maskedKey?: string }> {
  if (flags.key === undefined) return {}
  const { readKeysFile } = await import('../../keys/keys-file.js')
  const { isMaskedKey, isWellFormedKey, readTypedMask } = await import('../../keys/api-key-text.js')
  const query = readTypedMask(flags.key)
  const path = resolveKeysFile(flags.keys)
  // The keys file first: a long prefix of a registered key is itself well-formed.
  if (existsSync(path)) {
    const { matchKey } = await import('../../keys/manage-keys.js')
    try {
      return { apiKey: matchKey(await readKeysFile(path), query).key }
    } catch (error) {
      if (!isMaskedKey(query) && !isWellFormedKey(query)) throw new CliError(`--key: ${(error as Error).message}`)
    }
  }
  if (isWellFormedKey(query)) return { apiKey: query }
  // The masked form of an open-mode key, which no keys file holds, names its entries too.
  if (isMaskedKey(query)) return { maskedKey: query }
  throw new CliError(`--key "${query}" is not a key: give the whole key, or its masked form as \`sandbox logs\` shows it (sk_sandbox_abcd…wxyz); a prefix works for keys in the keys file (${path})`)
}

/** What `sandbox logs` says on stderr when it found no request: which log it read, and how requests get there. */
async function describeEmptyLog(kind: string, storage: string, dataDir: string, filter: { apiKey?: string; maskedKey?: string }): Promise<string> {
  const { maskUrlPassword } = await import('../../text/url-password.js')
  const where = kind === 'redis' ? maskUrlPassword(storage) : dataDir
  if (filter.apiKey !== undefined || filter.maskedKey !== undefined) return escapeControls(`no request of that key in the request log of ${where}`)
  const serve = kind === 'redis' ? `--storage ${where}` : `--data-dir ${where}`
  return escapeControls(`no request in the request log of ${where} (sandbox serve ${serve} logs each request it answers)`)
}

async function runLogs(flags: LogsFlags): Promise<void> {
  const { createSandboxStorage } = await import('../../storage/create-storage.js')
  const { StorageError, toStorageError } = await import('../../storage/storage-error.js')
  const { followRequestLog } = await import('../../server/read-request-log.js')
  const { storage, dataDir, kind } = await readStorageSetting(flags)
  if (kind === 'memory') {
    throw new CliError('memory storage keeps the request log inside the server process only; run serve with --storage fs (or a redis URL) to read it here')
  }
  const filter = await resolveKeyFilter(flags)
  // It only reads: a data dir it cannot write in (another user's, a read-only mount) is fine.
  const store = await createSandboxStorage({ kind, dataDir, url: storage, readOnly: true })
  const out = await import('../output.js')
  const follower = followRequestLog(store, { ...filter, tail: flags.tail })
  let printed = 0
  const printNew = async () => {
    for await (const entries of follower.readBatches()) {
      if (entries.length === 0) continue
      printed += entries.length
      process.stdout.write(`${entries.map((entry) => (flags.json ? formatJson(entry) : formatEntry(out, entry))).join('\n')}\n`)
    }
  }
  // What redis refuses (NOPERM: a user without SCAN or MGET) or the client's own errors end the
  // command as a storage failure (exit 2), not as a bug with its stack (exit 1).
  const failRead = (error: unknown) => {
    throw kind === 'redis' && (error as Error | undefined)?.name !== 'SetupError' ? toStorageError(error, 'read the request log') : error
  }
  if (!flags.follow) {
    try {
      await printNew().catch(failRead)
    } finally {
      // A redis connection would keep the process alive.
      await store.dispose()
    }
    // Printing nothing left a first `sandbox logs` wondering whether it read the server's data dir.
    if (printed === 0 && !flags.json && flags.tail !== 0) process.stderr.write(`${await describeEmptyLog(kind, storage, dataDir, filter)}\n`)
    return
  }
  // Ctrl+C is how --follow ends, as with `webhook listen`: a clean stop and exit 0.
  const stop = new AbortController()
  onFirstStopSignal(() => stop.abort())
  // Told once per stall: a paused or overloaded redis keeps the connection, so the storage's
  // connection-lost line never comes, and each read fails only after the command timeout.
  let stalled = false
  try {
    await printNew().catch(failRead)
    while (!stop.signal.aborted) {
      await sleep(POLL_MS, undefined, { signal: stop.signal }).catch(() => {})
      // A redis that drops or stalls while followed ends no follow: the storage prints when the
      // connection is lost and when it is back, and the entries logged meanwhile come then.
      if (!stop.signal.aborted) await printNew().then(() => { stalled = false }, async (error: unknown) => {
        if (kind !== 'redis') throw error
        if (error instanceof StorageError) return
        // The client's own errors for a read that lost its connection under way (the storage's
        // connection-lost line tells that), or that got no answer.
        const message = (error as Error)?.message
        if (message === 'Connection is closed.') return
        if (message !== 'Command timed out') failRead(error)
        if (stalled) return
        stalled = true
        const { maskUrlPassword } = await import('../../text/url-password.js')
        process.stderr.write(`sandbox: redis ${maskUrlPassword(storage)} did not answer a read (${message}); reading again until it does\n`)
      })
    }
  } finally {
    await store.dispose()
  }
}

/** `sandbox logs`: the per-key request log (request_id, status, error_code, Idempotency-Key). */
export function registerLogs(program: Command): void {
  const command = program.command('logs').description('show the request log that serve keeps per key')
    .addOption(new Option('--key <key>', 'only this API key: the key, its masked form, or a unique prefix of a registered one'))
    .addOption(new Option('--tail <n>', 'only the last N requests (of --key\'s, with it); with --follow, then the new ones').argParser(parseTail))
    .addOption(new Option('--follow', 'keep printing new requests until Ctrl+C'))
  addJsonOption(addKeysFileOption(addStorageOptions(command, { memory: false })), 'one JSON object per line').action((flags: LogsFlags) => runLogs(flags))
}
