import { Option, type Command } from 'commander'
import { CliError, describeListenError, isListenError, keepExitCodeWhenStdoutCloses } from '../cli-error.js'
import { formatJson } from '../json-text.js'
import { readJsonFile } from '../read-json-file.js'
import { printDelivery, printError, printKeysForgotten, printRequest } from '../serve-log-lines.js'
import { createStorageErrorGate } from '../storage-error-gate.js'
import { stopOnSignals } from '../serve-stop.js'
import { hintValues } from '../completion/value-hints.js'
import { addStorageOptions, readPathSetting, readPortSetting, type StorageFlags } from '../options.js'
import { readSetting } from '../env-values.js'
import { checkHostShape } from '../host-shape.js'
import { readStorageSetting } from '../storage-setting.js'
import type { RedisUrl } from '../../server/sandbox-types.js'
import type { TlsFlags } from '../read-tls-files.js'
import type { FaultsConfig } from '../../faults/faults-schema.js'
import type { DeliveryReport } from '../../webhooks/delivery-report.js'

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
  forgetIdleKeys?: string
}

/** Idle time after which serve collects garbage once, giving a load burst's memory back. */
const IDLE_GC_MS = 3000
/** Starts the sandbox server: adapts flags and environment to createSandbox + listenSandbox. */
async function runServe(flags: ServeFlags): Promise<void> {
  const { parseRateLimit } = await import('../../server/rate-limiter.js')
  const portSetting = readSetting(flags.port, '--port', 'SANDBOX_PORT')
  const port = readPortSetting(portSetting.value ?? '4010', portSetting.source)
  const hostSetting = readSetting(flags.host, '--host', 'SANDBOX_HOST')
  const host = hostSetting.value ?? '127.0.0.1'
  checkHostShape(host, hostSetting.source)
  const { storage, dataDir, kind } = await readStorageSetting(flags)
  const keysSetting = readPathSetting(flags.keys, '--keys', 'SANDBOX_KEYS_FILE')
  const keysFile = keysSetting.value
  const { readForgetIdleSetting } = await import('../forget-idle-setting.js')
  const forgetIdleKeysMs = readForgetIdleSetting(readSetting(flags.forgetIdleKeys, '--forget-idle-keys', 'SANDBOX_FORGET_IDLE_KEYS'), keysSetting)
  const rateSetting = readSetting(flags.rateLimit, '--rate-limit', 'SANDBOX_RATE_LIMIT')
  let rateLimit: ReturnType<typeof parseRateLimit>
  try {
    rateLimit = parseRateLimit(rateSetting.value ?? '120/60')
  } catch (error) {
    throw new CliError(`${rateSetting.source}: ${(error as Error).message}`)
  }
  const config = flags.config ? await readJsonFile('--config', flags.config) : undefined
  const tls = await (await import('../read-tls-files.js')).readTlsFiles(flags)
  // Set in a CI job's environment, it is not on the command line: name where it came from.
  const { value: faultsFile, source: faultsFlag } = readPathSetting(flags.faults, '--faults', 'SANDBOX_FAULTS')
  // Checked by createSandbox, which names the file and the field in its error.
  const faults = faultsFile === undefined ? undefined : await readJsonFile(faultsFlag, faultsFile) as FaultsConfig
  const { parseRetrySchedule } = await import('../../webhooks/retry-schedule.js')
  let webhookRetrySchedule: number[] | undefined
  try {
    webhookRetrySchedule = flags.webhookRetrySchedule === undefined ? undefined : parseRetrySchedule(flags.webhookRetrySchedule)
  } catch (error) {
    throw new CliError(`--webhook-retry-schedule: ${(error as Error).message}`)
  }
  const webhookForwardTo = flags.webhookForwardTo
  // A secret belongs in the environment (a flag shows in `ps`); empty means none, as with the other secrets.
  const { value: webhookForwardSecret, source: forwardSecretSource } = readSetting(flags.webhookForwardSecret, '--webhook-forward-secret', 'SANDBOX_WEBHOOK_FORWARD_SECRET')
  if (webhookForwardSecret !== undefined) {
    // Checked here too, to name where a bad one came from.
    const { parseForwardSecret } = await import('../../webhooks/forward-url.js')
    parseForwardSecret(webhookForwardSecret, forwardSecretSource)
    // Exported for a CI job's receiver, the variable reaches every serve of the job: name it, not a flag never given.
    if (webhookForwardTo === undefined) {
      throw new CliError(`${forwardSecretSource} signs the deliveries of --webhook-forward-to: give that URL too${forwardSecretSource === '--webhook-forward-secret' ? '' : ', or unset it for a serve that forwards nothing'}`)
    }
  }
  const json = Boolean(flags.jsonLogs)
  const out = await import('../output.js')

  const { createSandbox } = await import('../../server/create-sandbox.js')
  const { maskUrlPassword } = await import('../../text/url-password.js')
  const { listenSandbox } = await import('../../server/listen.js')
  const { startIdleGc } = await import('../../server/idle-gc.js')
  const { printServeReady } = await import('../serve-ready.js')
  // Its timer is unref'd: a start that fails below does not wait for it.
  const idleGc = startIdleGc({ idleMs: IDLE_GC_MS })
  // While a disk is full every request fails: one line per 30 s says so, not one per request.
  const storageErrors = createStorageErrorGate()
  // Deliveries left due by the last run start before the server listens: their lines wait for the
  // readiness line, which stays the last start-up line (a script takes the first URL it prints).
  let heldDeliveries: DeliveryReport[] | undefined = flags.quiet ? undefined : []
  let heldForgotten: number | undefined = 0
  const printDeliveryLine = (report: DeliveryReport) => printDelivery(out, { ...report, url: maskUrlPassword(report.url) }, json)
  const sandbox = await createSandbox({
    storage: kind === 'redis' ? storage as RedisUrl : kind,
    dataDir,
    logError: (error) => printError(error, json, storageErrors),
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
    forgetIdleKeysMs,
    // The sweep at start may finish before the readiness line, which is held for as deliveries are.
    onKeysForgotten: flags.quiet ? undefined : (count) => (heldForgotten === undefined ? printKeysForgotten(out, count, forgetIdleKeysMs!, json) : (heldForgotten += count)),
    onDelivery: flags.quiet ? undefined : (report) => (heldDeliveries ? heldDeliveries.push(report) : printDeliveryLine(report)),
  })
  let listener: Awaited<ReturnType<typeof listenSandbox>>
  try {
    listener = await listenSandbox(sandbox, { port, host, tls })
  } catch (error) {
    idleGc.stop()
    // Nothing was served yet: the listen error is what to report, not a storage write that failed at close.
    await sandbox.close().catch(() => {})
    // Worded here, not by main's toCliError, to name SANDBOX_HOST or SANDBOX_PORT when the value came from there.
    if (isListenError(error)) throw new CliError(describeListenError(error, portSetting.source, hostSetting.source), { code: error.code, cause: error })
    throw error
  }

  const { capYoungGeneration } = await import('../../server/young-generation-cap.js')
  const youngCap = capYoungGeneration()

  // Handlers first: a supervisor may signal as soon as it reads the readiness line.
  stopOnSignals({ json, idleGc, youngCap, listener, sandbox })

  printServeReady(out, { json, listener, sandbox, kind, storage, dataDir, keysFile, rateLimit, forgetIdleKeysMs, faultsFile, faults, webhookForwardTo, forwardSecretSource: webhookForwardSecret === undefined ? undefined : forwardSecretSource, allowLocalWebhooks: flags.allowLocalWebhooks })
  const held = heldDeliveries ?? []
  heldDeliveries = undefined
  for (const report of held) printDeliveryLine(report)
  if (heldForgotten) printKeysForgotten(out, heldForgotten, forgetIdleKeysMs!, json)
  heldForgotten = undefined
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
    .addOption(hintValues(new Option('--rate-limit <rule>', 'requests per key: N/SECONDS or off (env SANDBOX_RATE_LIMIT, default 120/60)'), { words: ['off'] }))
    .addOption(new Option('--json-logs', 'log JSON lines instead of text'))
    .addOption(new Option('--quiet', 'do not print a line per request or delivery'))
    .addOption(new Option('--log-bodies', 'also print each request\'s body and its answer\'s (cut at 4,000 characters, webhook secrets masked; not kept in sandbox logs)'))
    .addOption(new Option('--allow-local-webhooks', 'accept http:// and local or private webhook URLs (development only)'))
    .addOption(new Option('--webhook-forward-to <url>', 'also deliver every key\'s events, signed, to this URL (no tunnel needed)'))
    .addOption(new Option('--webhook-forward-secret <secret>', 'sign the forward deliveries with this whsec_ secret instead of the one kept in the data dir, e.g. one your CI receiver already holds (env SANDBOX_WEBHOOK_FORWARD_SECRET)'))
    .addOption(new Option('--webhook-retry-schedule <delays>', 'delays after the first attempt (default 5s,30s,2m,10m)'))
    .addOption(new Option('--forget-idle-keys <duration>', 'open mode: delete the state of keys no request used for longer than DURATION, at least 1h, e.g. 7d (env SANDBOX_FORGET_IDLE_KEYS)'))
    .addOption(new Option('--faults <file>', 'fail, delay or cut matching requests on purpose, as this JSON file says (env SANDBOX_FAULTS)'))
    .action((flags: ServeFlags) => runServe(flags))
  keepExitCodeWhenStdoutCloses(command)
}
