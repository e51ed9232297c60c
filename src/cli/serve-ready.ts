import { formatJson } from './json-text.js'
import { formatDuration } from './duration-text.js'
import { DEFAULT_BASE_URL } from './options.js'
import type * as Output from './output.js'
import { maskUrlPassword } from '../text/url-password.js'
import { previewSecret } from '../webhooks/signature.js'
import type { FaultsConfig } from '../faults/faults-schema.js'
import type { SandboxListener } from '../server/listen.js'
import type { RateLimit } from '../server/rate-limiter.js'
import type { Sandbox } from '../server/sandbox-types.js'
import type { StorageKind } from '../storage/create-storage.js'

/** What serve says of itself once it listens: its flags as resolved, and the running sandbox. */
export interface ServeStart {
  json: boolean
  listener: Pick<SandboxListener, 'url'>
  sandbox: Pick<Sandbox, 'faultSeed' | 'forwardSecret'>
  kind: StorageKind
  storage: string
  dataDir: string
  keysFile: string | undefined
  rateLimit: RateLimit | false
  /** `--forget-idle-keys` in ms, undefined when off. */
  forgetIdleKeysMs?: number | undefined
  faultsFile: string | undefined
  faults: FaultsConfig | undefined
  webhookForwardTo: string | undefined
  /** Where the forward secret was given (flag or variable), when it was: printed then as a preview only. */
  forwardSecretSource: string | undefined
  allowLocalWebhooks: boolean | undefined
}

/** Prints serve's start: the faults notice when they are on, the webhook notes, then the readiness line. */
export function printServeReady(out: typeof Output, start: ServeStart): void {
  const { json, listener, sandbox, kind, storage, dataDir, keysFile, rateLimit, forgetIdleKeysMs, faultsFile, faults, webhookForwardTo, forwardSecretSource, allowLocalWebhooks } = start
  // A secret the user gave is one they hold already: a CI log that printed it whole would leak it.
  const secret = sandbox.forwardSecret
  const shownSecret = forwardSecretSource === undefined ? secret ?? null : null
  const secretText = forwardSecretSource === undefined ? secret : `the secret from ${forwardSecretSource} (${previewSecret(secret!)})`
  const redisUrl = kind === 'redis' ? maskUrlPassword(storage) : null
  const storageText = kind === 'fs' ? `fs ${dataDir}` : kind === 'redis' ? `redis ${redisUrl}` : 'memory'
  const keysText = keysFile ? `keys ${keysFile}` : 'keys open'
  const limitText = rateLimit ? `rate limit ${rateLimit.limit}/${rateLimit.windowSeconds}s` : 'rate limit off'
  const forgetText = forgetIdleKeysMs === undefined ? '' : `, keys unused for ${formatDuration(forgetIdleKeysMs)} forgotten`
  // Said at every start, so a server failing on purpose is never taken for a broken one.
  if (faultsFile !== undefined) {
    const rules = faults!.rules.length
    process.stdout.write(json
      ? `${formatJson({ level: 'warn', event: 'faults', file: faultsFile, rules, seed: sandbox.faultSeed })}\n`
      : `${out.chalk.yellow('faults')}: on, ${rules} ${rules === 1 ? 'rule' : 'rules'} from ${faultsFile} (seed ${sandbox.faultSeed}): requests may fail, stall or be cut on purpose\n`)
  }
  if (json) {
    // rate_limit's windowSeconds is the name earlier versions printed, kept for parsers of it.
    process.stdout.write(`${formatJson({ level: 'info', event: 'ready', url: listener.url, storage: kind, data_dir: kind === 'fs' ? dataDir : null, redis_url: redisUrl, keys: keysFile ?? null, rate_limit: rateLimit ? { limit: rateLimit.limit, window_seconds: rateLimit.windowSeconds, windowSeconds: rateLimit.windowSeconds } : null, webhook_forward_to: webhookForwardTo ? maskUrlPassword(webhookForwardTo) : null, webhook_forward_secret: shownSecret, webhook_forward_secret_preview: secret === undefined ? null : previewSecret(secret), allow_local_webhooks: Boolean(allowLocalWebhooks), forget_idle_keys: forgetIdleKeysMs === undefined ? null : formatDuration(forgetIdleKeysMs), forget_idle_keys_ms: forgetIdleKeysMs ?? null })}\n`)
  } else {
    // The readiness line comes last, so a script waiting for it has seen everything before.
    if (webhookForwardTo) {
      process.stdout.write(`webhooks: every event is also forwarded to ${maskUrlPassword(webhookForwardTo)}, signed with ${secretText}\n`)
      const baseUrl = listener.url === DEFAULT_BASE_URL ? '' : ` --base-url ${listener.url}`
      process.stdout.write(out.chalk.dim(`webhooks: to send one now, in another terminal: sandbox webhook trigger loan.issued${baseUrl}\n`))
    }
    if (allowLocalWebhooks) process.stdout.write('webhooks: local and http endpoints allowed (--allow-local-webhooks)\n')
    process.stdout.write(`sandbox ready: ${listener.url} (storage ${storageText}, ${keysText}, ${limitText}${forgetText})\n`)
  }
}
