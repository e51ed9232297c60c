import { readFile } from 'node:fs/promises'
import { Option, type Command } from 'commander'
import { CliError, keepExitCodeWhenStdoutCloses } from '../cli-error.js'
import { expandHome } from '../expand-home.js'
import { formatJson } from '../json-text.js'
import { printDelivery, printError, printRequest } from '../serve-log-lines.js'
import { addStorageOptions, DEFAULT_BASE_URL, readPathVariable, readPortText, resolveStorageFlags, type StorageFlags } from '../options.js'
import type { RedisUrl } from '../../server/sandbox-types.js'
import type { TlsFlags } from '../read-tls-files.js'
import type { FaultsConfig } from '../../faults/faults-schema.js'

interface ServeFlags extends StorageFlags, TlsFlags {
  port?: string
  host?: string
  config?: string
  keys?: string
  rateLimit?: string
  jsonLogs?: boolean
  quiet?: boolean
  logBodies?: boolean
  allowLocalWebhooks?: boolean
  webhookForwardTo?: string
  webhookForwardSecret?: string
  webhookRetrySchedule?: string
  faults?: string
}

function parsePort(text: string): number {
  const port = readPortText(text)
  if (port === undefined) throw new CliError(`invalid port "${text}": expected 0-65535`)
  return port
}

/**
 * A JSON file given to `flag` (`--config`, `--faults`): a byte order mark and CRLF are fine, a
 * syntax error says its line, a key written twice is refused.
 */
async function readJsonFile(flag: string, path: string): Promise<Record<string, unknown>> {
  const { decodeJsonBytes, describeReadError, parseJsonText } = await import('../../json-text/read-json-text.js')
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new CliError(`cannot read ${flag} ${path}: ${describeReadError(error)}`, { cause: error })
  }
  let text: string
  let config: Record<string, unknown>
  try {
    text = decodeJsonBytes(bytes)
    config = parseJsonText(text) as Record<string, unknown>
  } catch (error) {
    throw new CliError(`${flag} ${path}: ${(error as Error).message}`, { cause: error })
  }
  // A figure set twice would start the server on the last one without a word: refuse, as for scenarios.
  const { describeDuplicateKey, findDuplicateKeys } = await import('../../scenarios/find-duplicate-keys.js')
  const duplicates = findDuplicateKeys(text)
  if (duplicates.length > 0) {
    throw new CliError(duplicates.map((duplicate) => `${flag} ${path}: ${duplicate.path.join('.')}: ${describeDuplicateKey(duplicate)}`).join('\n'))
  }
  return config
}

/** Idle time after which serve collects garbage once, giving a load burst's memory back. */
const IDLE_GC_MS = 3000
/** Starts the sandbox server: adapts flags and environment to createSandbox + listenSandbox. */
async function runServe(flags: ServeFlags): Promise<void> {
  const { parseRateLimit } = await import('../../server/rate-limiter.js')
  const { parseStorageKind } = await import('../../storage/create-storage.js')
  const port = parsePort(flags.port ?? process.env.SANDBOX_PORT ?? '4010')
  const host = flags.host ?? process.env.SANDBOX_HOST ?? '127.0.0.1'
  const { storage, dataDir } = resolveStorageFlags(flags)
  const kind = parseStorageKind(storage)
  const envKeysFile = flags.keys === undefined ? readPathVariable('SANDBOX_KEYS_FILE') : undefined
  const keysFile = flags.keys ?? (envKeysFile === undefined ? undefined : expandHome(envKeysFile))
  let rateLimit: ReturnType<typeof parseRateLimit>
  try {
    rateLimit = parseRateLimit(flags.rateLimit ?? process.env.SANDBOX_RATE_LIMIT ?? '120/60')
  } catch (error) {
    throw new CliError(`--rate-limit: ${(error as Error).message}`)
  }
  const config = flags.config ? await readJsonFile('--config', flags.config) : undefined
  const tls = await (await import('../read-tls-files.js')).readTlsFiles(flags)
  const envFaults = flags.faults === undefined ? readPathVariable('SANDBOX_FAULTS') : undefined
  const faultsFile = flags.faults ?? (envFaults ? expandHome(envFaults) : undefined)
  // Set in a CI job's environment, it is not on the command line: name where it came from.
  const faultsFlag = flags.faults === undefined ? 'SANDBOX_FAULTS' : '--faults'
  // Checked by createSandbox, which names the file and the field in its error.
  const faults = faultsFile === undefined ? undefined : await readJsonFile(faultsFlag, faultsFile) as FaultsConfig
  const { parseRetrySchedule } = await import('../../webhooks/deliveries.js')
  let webhookRetrySchedule: number[] | undefined
  try {
    webhookRetrySchedule = flags.webhookRetrySchedule === undefined ? undefined : parseRetrySchedule(flags.webhookRetrySchedule)
  } catch (error) {
    throw new CliError(`--webhook-retry-schedule: ${(error as Error).message}`)
  }
  const webhookForwardTo = flags.webhookForwardTo
  // A secret belongs in the environment (a flag shows in `ps`); empty means none, as with the other secrets.
  const webhookForwardSecret = flags.webhookForwardSecret ?? (process.env.SANDBOX_WEBHOOK_FORWARD_SECRET || undefined)
  if (webhookForwardSecret !== undefined) {
    // Checked here too, to name where a bad one came from.
    const { parseForwardSecret } = await import('../../webhooks/forward-url.js')
    parseForwardSecret(webhookForwardSecret, flags.webhookForwardSecret === undefined ? 'SANDBOX_WEBHOOK_FORWARD_SECRET' : '--webhook-forward-secret')
  }
  const json = Boolean(flags.jsonLogs)
  const out = await import('../output.js')

  const { createSandbox } = await import('../../server/create-sandbox.js')
  const { maskUrlPassword } = await import('../../text/url-password.js')
  const { listenSandbox } = await import('../../server/listen.js')
  const { startIdleGc } = await import('../../server/idle-gc.js')
  // Its timer is unref'd: a start that fails below does not wait for it.
  const idleGc = startIdleGc({ idleMs: IDLE_GC_MS })
  const sandbox = await createSandbox({
    storage: kind === 'redis' ? storage as RedisUrl : kind,
    dataDir,
    logError: (error) => printError(error, json),
    onStorageStatus: (message, up) => {
      if (json) process.stdout.write(`${formatJson({ level: up ? 'info' : 'warn', event: 'storage', message })}\n`)
      else process.stderr.write(`${up ? out.chalk.green('storage') : out.chalk.yellow('storage')} ${message}\n`)
    },
    config,
    configSource: flags.config ? `--config ${flags.config}` : undefined,
    keysFile,
    rateLimit,
    logBodies: Boolean(flags.logBodies) && !flags.quiet,
    onRequest: (entry) => {
      idleGc.noteActivity()
      if (!flags.quiet) printRequest(out, entry, json)
    },
    allowLocalWebhooks: Boolean(flags.allowLocalWebhooks),
    webhookForwardTo,
    webhookForwardSecret,
    webhookRetrySchedule,
    faults,
    faultsSource: faultsFile === undefined ? undefined : `${faultsFlag} ${faultsFile}`,
    // A forward URL may carry a password: the terminal and the logs get it masked.
    onDelivery: flags.quiet ? undefined : (report) => printDelivery(out, { ...report, url: maskUrlPassword(report.url) }, json),
  })
  let listener: Awaited<ReturnType<typeof listenSandbox>>
  try {
    listener = await listenSandbox(sandbox, { port, host, tls })
  } catch (error) {
    idleGc.stop()
    await sandbox.close()
    throw error
  }

  const { capYoungGeneration } = await import('../../server/young-generation-cap.js')
  const youngCap = capYoungGeneration()

  // Handlers first: a supervisor may signal as soon as it reads the readiness line.
  let stopping = false
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return forceStop(signal, json)
    stopping = true
    idleGc.stop()
    youngCap.stop()
    // A slow receiver or client can hold the stop for up to 10 s: say why, and how not to wait.
    const slow = setTimeout(() => writeStopping(json), STOPPING_NOTICE_MS)
    slow.unref()
    await listener.close()
    await sandbox.close()
    clearTimeout(slow)
    process.stdout.write(json ? `${formatJson({ level: 'info', event: 'stopped', signal })}\n` : `sandbox stopped (${signal})\n`)
    process.exit(0)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // A log reader gone (`serve | head`, a dead `tee`) ends the server as a signal would, not
  // mid-request with the lock left behind (main.ts leaves this EPIPE to us).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' && !stopping) void stop('SIGPIPE')
  })

  const redisUrl = kind === 'redis' ? maskUrlPassword(storage) : null
  const storageText = kind === 'fs' ? `fs ${dataDir}` : kind === 'redis' ? `redis ${redisUrl}` : 'memory'
  const keysText = keysFile ? `keys ${keysFile}` : 'keys open'
  const limitText = rateLimit ? `rate limit ${rateLimit.limit}/${rateLimit.windowSeconds}s` : 'rate limit off'
  // Said at every start, so a server failing on purpose is never taken for a broken one.
  if (faultsFile !== undefined) {
    const rules = faults!.rules.length
    process.stdout.write(json
      ? `${formatJson({ level: 'warn', event: 'faults', file: faultsFile, rules, seed: sandbox.faultSeed })}\n`
      : `${out.chalk.yellow('faults')}: on, ${rules} ${rules === 1 ? 'rule' : 'rules'} from ${faultsFile} (seed ${sandbox.faultSeed}): requests may fail, stall or be cut on purpose\n`)
  }
  if (json) {
    process.stdout.write(`${formatJson({ level: 'info', event: 'ready', url: listener.url, storage: kind, data_dir: kind === 'fs' ? dataDir : null, redis_url: redisUrl, keys: keysFile ?? null, rate_limit: rateLimit || null, webhook_forward_to: webhookForwardTo ? maskUrlPassword(webhookForwardTo) : null, webhook_forward_secret: sandbox.forwardSecret ?? null, allow_local_webhooks: Boolean(flags.allowLocalWebhooks) })}\n`)
  } else {
    // The readiness line comes last, so a script waiting for it has seen everything before.
    if (webhookForwardTo) {
      process.stdout.write(`webhooks: every event is also forwarded to ${maskUrlPassword(webhookForwardTo)}, signed with ${sandbox.forwardSecret}\n`)
      const baseUrl = listener.url === DEFAULT_BASE_URL ? '' : ` --base-url ${listener.url}`
      process.stdout.write(out.chalk.dim(`webhooks: to send one now, in another terminal: sandbox webhook trigger loan.issued${baseUrl}\n`))
    }
    if (flags.allowLocalWebhooks) process.stdout.write('webhooks: local and http endpoints allowed (--allow-local-webhooks)\n')
    process.stdout.write(`sandbox ready: ${listener.url} (storage ${storageText}, ${keysText}, ${limitText})\n`)
  }
}

/** How long a stop may wait for what is in flight before serve says so. */
const STOPPING_NOTICE_MS = 1000

function writeStopping(json: boolean): void {
  process.stdout.write(json
    ? `${formatJson({ level: 'info', event: 'stopping', message: 'waiting for requests and webhook deliveries in flight (up to 10 s)' })}\n`
    : 'stopping: waiting for requests and webhook deliveries in flight (up to 10 s); press Ctrl+C again to stop now\n')
}

/** A second signal while stopping: exit at once, as a signal's exit code (130 for SIGINT). */
function forceStop(signal: NodeJS.Signals, json: boolean): never {
  const message = 'stopped without waiting: a request in flight may not have been answered, and a webhook delivery in flight may be sent again after a restart'
  process.stderr.write(json ? `${formatJson({ level: 'warn', event: 'forced_stop', signal, message })}\n` : `sandbox ${message} (${signal})\n`)
  process.exit(signal === 'SIGINT' ? 130 : 143)
}

/** `sandbox serve`: the whole partner API on a local port. */
export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve the whole /api/sandbox partner API locally')
    .addOption(new Option('--port <port>', 'port to listen on, 0 for any free port (env SANDBOX_PORT, default 4010)'))
    .addOption(new Option('--host <host>', 'address to bind (env SANDBOX_HOST, default 127.0.0.1)'))
    .addOption(new Option('--tls-cert <file>', 'answer https with this PEM certificate, e.g. from mkcert (env SANDBOX_TLS_CERT; needs --tls-key)'))
    .addOption(new Option('--tls-key <file>', 'the PEM private key of --tls-cert (env SANDBOX_TLS_KEY)'))
  addStorageOptions(command)
    .addOption(new Option('--config <file>', 'JSON deep-merged over the default sandbox config'))
    .addOption(new Option('--keys <file>', 'accept only keys registered in this file (env SANDBOX_KEYS_FILE)'))
    .addOption(new Option('--rate-limit <rule>', 'requests per key: N/SECONDS or off (env SANDBOX_RATE_LIMIT, default 120/60)'))
    .addOption(new Option('--json-logs', 'log JSON lines instead of text'))
    .addOption(new Option('--quiet', 'do not print a line per request or delivery'))
    .addOption(new Option('--log-bodies', 'also print each request\'s body and its answer\'s (cut at 4,000 characters, webhook secrets masked; not kept in sandbox logs)'))
    .addOption(new Option('--allow-local-webhooks', 'accept http:// and local or private webhook URLs (development only)'))
    .addOption(new Option('--webhook-forward-to <url>', 'also deliver every key\'s events, signed, to this URL (no tunnel needed)'))
    .addOption(new Option('--webhook-forward-secret <secret>', 'sign the forward deliveries with this whsec_ secret instead of the one kept in the data dir, e.g. one your CI receiver already holds (env SANDBOX_WEBHOOK_FORWARD_SECRET)'))
    .addOption(new Option('--webhook-retry-schedule <delays>', 'delays after the first attempt (default 5s,30s,2m,10m)'))
    .addOption(new Option('--faults <file>', 'fail, delay or cut matching requests on purpose, as this JSON file says (env SANDBOX_FAULTS)'))
    .action((flags: ServeFlags) => runServe(flags))
  keepExitCodeWhenStdoutCloses(command)
}
