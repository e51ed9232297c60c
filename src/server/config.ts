import { SetupError } from '../errors/setup-error.js'
import type { SandboxConfig } from '../domain/types.js'
import { sandboxConfigSchema } from '../schemas/config.js'
import { isJsonObject } from '../json-text/is-json-object.js'
import { formatSchemaIssues } from '../schemas/field-suggestions.js'
import { suggestClosest } from '../text/closest-match.js'
import { findConfigClashes } from './check-config-terms.js'

/** A partial object whose nested objects are partial too. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] }

function deepMerge(base: unknown, override: unknown): unknown {
  if (!isJsonObject(base) || !isJsonObject(override)) return override === undefined ? base : override
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(override)) merged[key] = deepMerge(base[key], value)
  return merged
}

/**
 * Paths of `override` keys that `base` does not have (typos that would otherwise be ignored), each
 * with the key of its level it most likely meant: `borow_rates (did you mean borrow_rates?)`.
 */
function findUnknownKeys(base: unknown, override: unknown, path = ''): string[] {
  if (!isJsonObject(base) || !isJsonObject(override)) return []
  return Object.entries(override).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key
    // Own keys only: `in` would take `__proto__`, `constructor` or `toString` as config keys and
    // let them through unreported (and `__proto__` would then swap the merged object's prototype).
    return Object.hasOwn(base, key) ? findUnknownKeys(base[key], value, at) : [`${at}${suggestClosest(key, Object.keys(base))}`]
  })
}

/**
 * The effective config: `overrides` deep-merged over the fixture config, then validated so a
 * typo in `--config FILE` fails at start rather than as odd loan math later.
 */
export function resolveConfig(base: SandboxConfig, overrides?: DeepPartial<SandboxConfig>, source = 'config overrides'): SandboxConfig {
  // A file holding `null` is a mistake (an empty export, a template left unfilled), not "no changes".
  if (overrides === null) throw new SetupError(`${source} is not a valid sandbox config: (root): Invalid input: expected object, received null`)
  const unknown = findUnknownKeys(base, overrides)
  if (unknown.length > 0) {
    throw new SetupError(`${source} is not a valid sandbox config: unknown ${unknown.length === 1 ? 'key' : 'keys'} ${unknown.join(', ')} (see GET /api/sandbox/config for the keys)`)
  }
  const merged = deepMerge(base, overrides ?? {})
  const result = sandboxConfigSchema.safeParse(merged)
  if (!result.success) {
    throw new SetupError(`${source} is not a valid sandbox config: ${formatSchemaIssues(result.error.issues, sandboxConfigSchema)}`)
  }
  const clashes = findConfigClashes(result.data as SandboxConfig)
  if (clashes.length > 0) throw new SetupError(`${source} is not a valid sandbox config: ${clashes.join('; ')}`)
  return result.data as SandboxConfig
}
