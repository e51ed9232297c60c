import { CliError } from './cli-error.js'
import { formatDuration, MAX_DURATION_MS, readDurationFlag } from './duration-text.js'
import type { Setting } from './env-values.js'
import { MIN_FORGET_IDLE_MS } from '../server/forget-idle-limits.js'
import { readDurationText } from '../text/duration-units.js'

/**
 * `serve --forget-idle-keys DURATION` (env SANDBOX_FORGET_IDLE_KEYS) in ms, or undefined when off.
 * Refused under an hour, and with a keys file (named by `keys`), whose keys are never forgotten.
 */
export function readForgetIdleSetting(setting: Setting, keys: Setting): number | undefined {
  // Told why before the range: "from 1ms" was said of a flag that takes nothing under an hour.
  const written = setting.value === undefined ? undefined : readDurationText(setting.value)
  if (written !== undefined && written < MIN_FORGET_IDLE_MS) {
    throw new CliError(`${setting.source}: ${setting.value} is shorter than the ${formatDuration(MIN_FORGET_IDLE_MS)} it takes at least (a key waiting on a webhook retry or between CI steps must keep its state); give e.g. 12h or 7d`)
  }
  const ms = readDurationFlag(setting.source, setting.value, MAX_DURATION_MS, MIN_FORGET_IDLE_MS)
  if (ms === undefined) return undefined
  if (keys.value !== undefined) {
    throw new CliError(`${setting.source} forgets the keys of open mode; keys of ${keys.source} keep their state until "sandbox keys reset" or "sandbox keys revoke": drop one of the two`)
  }
  return ms
}
