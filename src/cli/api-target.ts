import { SandboxApiError, SandboxConnectionError, SandboxRequestError } from '../client/api-error.js'
import type { TransportOptions } from '../client/request-types.js'
import { isLoopbackUrl } from '../scenarios/select-scenarios.js'
import { CliErrorCodes } from '../errors/codes.js'
import { canPrompt } from './can-prompt.js'
import { CliError } from './cli-error.js'
import { readSetting } from './env-values.js'
import { findBaseUrlProblem, showBaseUrl } from '../client/base-url.js'
import { readDurationFlag } from './duration-text.js'
import { DEFAULT_API_TIMEOUT_MS, DEFAULT_BASE_URL, MAX_API_TIMEOUT_MS } from './options.js'
import { withPromptSignals } from './prompt-signals.js'

/** Any key works on a `serve` without `--keys`: a fixed one, so that commands share one state. */
export const LOCAL_KEY = 'sk_sandbox_webhook_cli_local'

/**
 * `--base-url`, else SANDBOX_BASE_URL: checked for what fetch would refuse at every attempt (a
 * retried network error, and every line printing the password), then as the client checks it
 * (findBaseUrlProblem: a query or fragment, the API's own prefix).
 */
export function readBaseUrl(flag: string | undefined): string | undefined {
  const { value: baseUrl, source } = readSetting(flag, '--base-url', 'SANDBOX_BASE_URL')
  if (!baseUrl) return undefined
  // Before findBaseUrlProblem's scheme check: this one also wants the `//` ("127.0.0.1:4010" and
  // "localhost:4010" are no URL or a "localhost:" scheme to it), and shows the value as given.
  if (!/^https?:\/\//.test(baseUrl)) throw new CliError(`${source} must be an http(s) URL, got "${baseUrl}"`)
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
  if (url && (url.username || url.password)) {
    throw new CliError(`${source} cannot hold a user name or password (${url.protocol}//****@${url.host}): fetch sends none; the API takes its key from --api-key`)
  }
  const problem = findBaseUrlProblem(baseUrl)
  if (problem) throw new CliError(`${source} ${showBaseUrl(baseUrl)} ${problem}`)
  return baseUrl
}

/** `--api-key`, else SANDBOX_API_KEY (empty means none, as a CI secret that is not set gives). */
export function readApiKey(flag: string | undefined): string | undefined {
  const { value: apiKey, source } = readSetting(flag, '--api-key', 'SANDBOX_API_KEY')
  if (apiKey !== undefined) checkApiKey(apiKey, source)
  return apiKey
}

/** A sandbox key that can be sent in a header; `source` names where it came from. */
function checkApiKey(apiKey: string, source: string): void {
  // Spec 5: sandbox keys start with sk_sandbox_. Anything else is a mistake, and a live key must
  // not be sent to requests that open loans.
  if (!apiKey.startsWith('sk_sandbox_')) {
    const bearer = /^bearer\s/i.test(apiKey) ? ' (the key alone: sandbox sends "Authorization: Bearer KEY" itself)' : ''
    throw new CliError(`${source} must be a sandbox key (sk_sandbox_...), got "${apiKey.slice(0, 12)}${apiKey.length > 12 ? '...' : ''}"${bearer}`)
  }
  // A key read from a file saved with CRLF, or pasted with a space, cannot be sent in a header:
  // every request failed (as if the API had) with the whole key in the message.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new CliError(`${source} holds a space, line break or other character a key cannot have (a key file saved with CRLF line ends, or a trailing newline?): "${apiKey.slice(0, 12)}..."`)
  }
}

/** `--base-url`, `--api-key`, `--timeout` and `--verbose` as given. */
export interface ApiTargetFlags {
  baseUrl?: string
  apiKey?: string
  timeout?: string
  verbose?: boolean
}

/** Where a command's requests go, with which key, and how the transport reports. */
export interface ApiTarget {
  baseUrl: string
  apiKey: string
  /** The key is LOCAL_KEY, chosen because none was given. */
  local: boolean
  /** The proxy the requests go through, if a proxy variable applies. */
  proxy: string | undefined
  transport: TransportOptions
}

/**
 * The target of a command that calls the API: the base URL (default DEFAULT_BASE_URL); the key
 * from the flag or variable, else LOCAL_KEY on a server on this machine, else asked for on a terminal;
 * the proxy; and with `--verbose` every attempt printed (on stderr with `--json`).
 */
export async function resolveApiTarget(flags: ApiTargetFlags, options: { json?: boolean | undefined }): Promise<ApiTarget> {
  const { chalk, createNoteWriter } = await import('./output.js')
  const say = createNoteWriter(options.json)
  const baseUrl = readBaseUrl(flags.baseUrl) ?? DEFAULT_BASE_URL
  const timeoutMs = readDurationFlag('--timeout', flags.timeout, MAX_API_TIMEOUT_MS) ?? DEFAULT_API_TIMEOUT_MS
  let apiKey = readApiKey(flags.apiKey)
  // This machine as `run` tells it: serve --host 0.0.0.0 prints its URL with that host.
  const local = apiKey === undefined && isLoopbackUrl(baseUrl)
  if (local) apiKey = LOCAL_KEY
  if (apiKey === undefined) {
    if (options.json || !canPrompt()) throw new CliError(`give the API key for ${baseUrl} with --api-key or SANDBOX_API_KEY`)
    const { password } = await import('@inquirer/prompts')
    apiKey = await withPromptSignals((signal) => password({ message: `API key for ${baseUrl} (sk_sandbox_...)`, mask: true }, { signal }))
    checkApiKey(apiKey, 'the key')
  }
  const proxy = await (await import('./use-proxy.js')).useProxy(baseUrl, say)
  const { formatRetryWait } = await import('./run-progress.js')
  // As in `run`: a 429's Retry-After or a retried network error can last many seconds, and a
  // command waiting in silence looks stuck.
  const retryWait = options.json ? say : (line: string) => process.stdout.write(`${chalk.yellow(`    ${line}`)}\n`)
  const transport: TransportOptions = { baseUrl, apiKey, timeoutMs, onRetryWait: (wait) => retryWait(formatRetryWait(wait, timeoutMs)) }
  if (flags.verbose) {
    const { formatExchange } = await import('./verbose-exchange.js')
    transport.onAttempt = (request, answer, wire) => {
      for (const line of formatExchange(request.method, wire, answer)) say(`    ${line}`)
    }
  }
  return { baseUrl, apiKey, local, proxy, transport }
}

/** What to check when BASE_URL was not reached through PROXY, and the NO_PROXY that goes around it. */
export function formatProxyHint(proxy: string, baseUrl: string): string {
  return `; the requests went through the proxy ${proxy}: is it up, and can it reach the server? (NO_PROXY=${new URL(baseUrl).hostname} to connect directly)`
}

/** API error codes that a command's arguments or setup caused (exit 2), each with what to add to the API's message and, if not USAGE, its CLI code. */
export type SetupErrorCodes = Partial<Record<string, { hint?: string; code?: string }>>

/**
 * A client failure as the CLI error a user can act on: an unreachable server, a base URL that
 * reaches it the wrong way, a refused key or a request HTTP cannot carry is setup (exit 2); any
 * other refusal by the API is exit 1, save the `setupCodes` the command names (exit 2).
 */
export function toApiCliError(error: unknown, target: Pick<ApiTarget, 'baseUrl' | 'proxy' | 'local'>, setupCodes: SetupErrorCodes = {}): unknown {
  if (error instanceof SandboxConnectionError) {
    // A server with an untrusted certificate, or answering plain HTTP, is running (and a blocked port was never tried): its message says what to change.
    const running = error.certificate || error.proxyRefusal || error.plainHttp || error.blockedPort
    const hint = target.proxy ? formatProxyHint(target.proxy, target.baseUrl) : '; is the server running? (sandbox serve, or --base-url for another one)'
    return new CliError(`${error.message}${running ? '' : hint}`, { code: CliErrorCodes.UNREACHABLE, cause: error })
  }
  if (error instanceof SandboxRequestError) return new CliError(error.message, { cause: error })
  if (!(error instanceof SandboxApiError)) return error
  const setup = error.errorCode === null ? undefined : setupCodes[error.errorCode]
  if (setup) {
    const reason = typeof error.details?.reason === 'string' ? ` (${error.details.reason})` : ''
    return new CliError(`${error.message}${reason}${setup.hint ?? ''}`, { code: setup.code ?? CliErrorCodes.USAGE, cause: error })
  }
  // The base URL is wrong, not the request: another server's 2xx, a redirect (not followed), or a TLS server asked in plain HTTP. As in run.
  if ((error.status >= 200 && error.status < 400) || (error.status === 400 && /answers https only/.test(error.message))) {
    return new CliError(error.message, { code: CliErrorCodes.UNREACHABLE, cause: error })
  }
  if (error.status === 401 || error.status === 403) {
    const which = target.local ? ': this server takes registered keys only, give one with --api-key (sandbox keys list)' : ''
    // The API's sentence ends with a period; the advice follows it after a colon.
    return new CliError(`the server refused the key: ${which ? error.message.replace(/\.$/, '') : error.message}${which}`, { code: CliErrorCodes.KEY_REFUSED, cause: error })
  }
  return new CliError(error.message, { exitCode: 1, code: CliErrorCodes.REFUSED, cause: error })
}
