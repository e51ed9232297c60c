import { Option, type Command } from 'commander'
import { CliError } from './cli-error.js'
import { formatDuration, parseDuration } from './duration-text.js'
import { readEnv, readSetting, type Setting } from './env-values.js'
import { expandHome } from './expand-home.js'
import { refuseDashPath } from './path-options.js'
import { hintValues } from './completion/value-hints.js'
import { isSecretPreview } from '../text/secret-preview.js'

/**
 * Option sets shared by several commands, defined once. Defaults are applied by the commands
 * (flag, then environment variable, then default), so they are only named in the help text.
 */
export const DEFAULT_DATA_DIR = '.sandbox'
/** The server the API commands call unless told otherwise: `sandbox serve` on its default port. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4010'
/** Where `sandbox keys` keeps registered keys unless told otherwise. */
export const DEFAULT_KEYS_FILE = '.sandbox/keys.json'

/** `--storage` and `--data-dir`: where the sandbox state lives (`memory: false` for tools that read a server's storage from outside). */
export function addStorageOptions(command: Command, { memory = true } = {}): Command {
  const kinds = memory ? 'fs, memory or redis://HOST:PORT/DB' : 'fs or redis://HOST:PORT/DB'
  return command
    .addOption(hintValues(new Option('--storage <kind>', `state storage: ${kinds} (env SANDBOX_STORAGE, default fs)`), { words: memory ? ['fs', 'memory'] : ['fs'], prefixes: ['redis://'] }))
    .addOption(new Option('--data-dir <dir>', `directory of fs storage (env SANDBOX_DATA_DIR, default ${DEFAULT_DATA_DIR})`))
}

/** `--keys FILE` for the commands that edit the keys file. */
export function addKeysFileOption(command: Command): Command {
  return command.addOption(new Option('--keys <file>', `keys file (env SANDBOX_KEYS_FILE, default ${DEFAULT_KEYS_FILE})`))
}

/** `--json`: machine-readable output on stdout. */
export function addJsonOption(command: Command, what = 'print JSON instead of text'): Command {
  return command.addOption(new Option('--json', what))
}

/** Storage flags as given by the user. */
export interface StorageFlags {
  storage?: string
  dataDir?: string
}

/**
 * The value of NAME, an environment variable that holds a path (`~` not yet expanded; empty is
 * unset, as readEnv has it). A line break in it is refused: set from a .env file saved with CRLF
 * line ends (`set -a; . ./.env` in Git Bash, WSL or a CI job), the value ends in "\r", and taken
 * as it was the path was another one: `SANDBOX_DATA_DIR` made a new, empty `.sandbox\r` beside
 * `.sandbox` without a word. So is `-`, which names no file (refuseDashPath).
 */
export function readPathVariable(name: string): string | undefined {
  const value = readEnv(name)
  refuseLineBreak(name, value, ` (${JSON.stringify(value)}), which no path has`)
  // SANDBOX_DATA_DIR names a directory; the other path variables name files.
  refuseDashPath(name, value, name.endsWith('_DIR') ? 'dir' : 'file')
  return value
}

/**
 * A path setting: FLAG's value when given (its `~` already expanded, see expandHomeInPathOptions),
 * else ENV's (readPathVariable, its `~` expanded here), with where it came from for messages.
 */
export function readPathSetting(flagValue: string | undefined, flag: string, env: string): Setting {
  if (flagValue !== undefined) return { value: flagValue, source: flag }
  const value = readPathVariable(env)
  return { value: value === undefined ? undefined : expandHome(value, { source: env }), source: env }
}

/** Throws the usage error for a VALUE from SOURCE that holds a line break (what a CRLF .env file leaves). */
function refuseLineBreak(source: string, value: string | undefined, why: string): void {
  if (value !== undefined && /[\r\n]/.test(value)) {
    throw new CliError(`${source} holds a line break${why}: a .env file saved with CRLF line ends? Save it with LF line ends`)
  }
}

/**
 * Resolves storage flags with their environment fallbacks; `storageSource` names where the
 * storage kind came from (`--storage`, `SANDBOX_STORAGE`, or the default's flag).
 */
export function resolveStorageFlags(flags: StorageFlags): { storage: string; dataDir: string; storageSource: string } {
  const storage = readSetting(flags.storage, '--storage', 'SANDBOX_STORAGE')
  return {
    // Trimmed once here: the value is also a redis URL, passed on as it is.
    storage: (storage.value ?? 'fs').trim(),
    storageSource: storage.value === undefined ? '--storage' : storage.source,
    dataDir: readPathSetting(flags.dataDir, '--data-dir', 'SANDBOX_DATA_DIR').value ?? DEFAULT_DATA_DIR,
  }
}

/** Resolves the keys file path for `sandbox keys`. */
export function resolveKeysFile(flag: string | undefined): string {
  return readPathSetting(flag, '--keys', 'SANDBOX_KEYS_FILE').value ?? DEFAULT_KEYS_FILE
}

/** `--secret`: the webhook signing secret (env SANDBOX_WEBHOOK_SECRET). */
export function addSecretOption(command: Command, what = 'webhook signing secret'): Command {
  return command.addOption(new Option('--secret <secret>', `${what} (env SANDBOX_WEBHOOK_SECRET)`))
}

/**
 * The secret from the flag or the environment, if any. One with a line break is refused, as a
 * path variable is (readPathVariable): the "\r" of a CRLF .env file is no part of a secret, and
 * kept, every signature was made (or checked) with another one. So is a space at either end:
 * cmd.exe's `set NAME=value && command` keeps the space before `&&` in the value.
 */
export function resolveSecret(flag: string | undefined): string | undefined {
  const { value: secret, source } = readSetting(flag, '--secret', 'SANDBOX_WEBHOOK_SECRET')
  refuseLineBreak(source, secret, ', which no signing secret has')
  if (secret !== undefined && secret.trim() !== secret) {
    const cmd = source === '--secret' ? '' : `: in cmd.exe, set "${source}=value" && ... keeps no space, set ${source}=value && ... keeps the one before &&`
    throw new CliError(`${source} starts or ends with a space, which no signing secret has${cmd}`)
  }
  // Copied from `webhook deliveries` or serve's start line: every signature would be made with it, and fail.
  if (secret !== undefined && secret.split(',').some(isSecretPreview)) {
    throw new CliError(`${source} is a secret's preview (whsec_... and its last 4 characters, as secretPreview, serve's start line for a secret it was given, and the reports show one), not the secret: give the whole secret (serve prints the forward secret it made in full at start; an endpoint's signingSecret is answered once, by webhook register, and webhook register URL --rotate-secret makes a new one)`)
  }
  return secret
}

/** `--receiver-port` and `--receiver-url`: the runner's webhook receiver, reached through a tunnel. */
export function addReceiverOptions(command: Command): Command {
  return command
    .addOption(new Option('--receiver-port <port>', "port of the runner's webhook receiver on 127.0.0.1, for a tunnel to point at (env SANDBOX_RECEIVER_PORT, default any free port)"))
    .addOption(new Option('--receiver-url <url>', 'public URL that reaches --receiver-port (a tunnel: ngrok, cloudflared, a reverse proxy), registered as the webhook endpoint; runs the webhook scenarios against a remote sandbox (env SANDBOX_RECEIVER_URL)'))
}

/** Receiver flags as given by the user. */
export interface ReceiverFlags {
  receiverPort?: string
  receiverUrl?: string
}

/**
 * Resolves and checks the receiver flags with their environment fallbacks (empty means none).
 * The URL comes back without a trailing slash: the runner appends `/hooks/<run>` to it.
 */
export function resolveReceiverFlags(flags: ReceiverFlags): { receiverPort?: number; receiverUrl?: string } {
  const port = readSetting(flags.receiverPort, '--receiver-port', 'SANDBOX_RECEIVER_PORT')
  const url = readSetting(flags.receiverUrl, '--receiver-url', 'SANDBOX_RECEIVER_URL')
  const resolved: { receiverPort?: number; receiverUrl?: string } = {}
  if (port.value !== undefined) resolved.receiverPort = readPortSetting(port.value, port.source)
  if (url.value !== undefined) resolved.receiverUrl = checkReceiverUrl(url.value, url.source)
  return resolved
}

/**
 * An absolute http(s) URL the server can register as it is: no credentials (the spec refuses
 * them), no query or fragment (`/hooks/<run>` goes after the path). A path prefix is kept.
 */
function checkReceiverUrl(text: string, source: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new CliError(`${source} must be an absolute http(s) URL (the tunnel's public address, e.g. https://abc.ngrok.app), got "${text}"`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CliError(`${source} must be an http(s) URL, got ${url.protocol} in "${text}"`)
  if (url.username || url.password) throw new CliError(`${source} must not carry a user name or password (the server refuses such an endpoint), got "${url.protocol}//***@${url.host}${url.pathname}"`)
  // `?` and `#` with nothing after them leave search and hash empty, yet would still end up in the endpoint.
  if (url.search || url.hash || /[?#]/.test(text)) throw new CliError(`${source} must not have a query or fragment (the runner appends /hooks/<run> to its path), got "${text}"`)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** A TCP port written as digits, 0 to 65535 (0 = any free port); undefined for anything else. */
export function readPortText(text: string): number | undefined {
  const port = Number(text)
  return /^\d+$/.test(text) && port <= 65535 ? port : undefined
}

/** A TCP port from SOURCE (a flag or variable name, for the message); 0 = any free port. */
export function readPortSetting(text: string, source: string): number {
  const port = readPortText(text)
  if (port === undefined) throw new CliError(`invalid ${source} "${text}": expected a port from 0 to 65535 (0 = any free port)`)
  return port
}

/** `--wait` alone: a first try and the 5 s retry of the default schedule. */
const DEFAULT_DELIVERY_WAIT_MS = 10_000
const MAX_DELIVERY_WAIT_MS = 900_000

/** `--wait [duration]`: wait for the deliveries a command caused to be delivered. */
export function addDeliveryWaitOption(command: Command): Command {
  return command.addOption(new Option('--wait [duration]', `wait up to DURATION (default ${formatDuration(DEFAULT_DELIVERY_WAIT_MS)}, at most ${formatDuration(MAX_DELIVERY_WAIT_MS)}) for every delivery to be delivered; exit 1 if one is not`))
}

/** `--wait [duration]` in ms, or undefined when not given. */
export function readDeliveryWait(value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined
  if (value === true) return DEFAULT_DELIVERY_WAIT_MS
  try {
    return parseDuration(value, MAX_DELIVERY_WAIT_MS)
  } catch (error) {
    // `trigger --wait loan.issued`: the optional value took the argument meant for the command.
    const swallowed = /^\d/.test(value) ? '' : `; "${value}" is not a duration: put it before --wait, or give --wait one (--wait 10s)`
    throw new CliError(`--wait: ${(error as Error).message}${swallowed}`)
  }
}

/** `--base-url`, `--api-key`, `--timeout` and `--verbose`: the commands that call a running server's API. */
export function addApiTargetOptions(command: Command): Command {
  return command
    .addOption(new Option('--base-url <url>', `server to call (env SANDBOX_BASE_URL, default ${DEFAULT_BASE_URL}: sandbox serve)`))
    .addOption(new Option('--api-key <key>', 'API key to call it with (env SANDBOX_API_KEY); on a local server, a fixed default'))
    .addOption(new Option('--timeout <duration>', `give up on an attempt of a request after DURATION, then retry (4 attempts in all; default ${formatDuration(DEFAULT_API_TIMEOUT_MS)}, at most ${formatDuration(MAX_API_TIMEOUT_MS)})`))
    .addOption(new Option('--verbose', 'print every request and answer: headers and bodies, the API key masked (on stderr with --json)'))
}

/** How long one attempt of a request may take in the API commands unless --timeout says otherwise: as in `run`. */
export const DEFAULT_API_TIMEOUT_MS = 10_000
/** The longest `--timeout` the API commands take: beyond an hour an attempt is a typo. */
export const MAX_API_TIMEOUT_MS = 3_600_000
