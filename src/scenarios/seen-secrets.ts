import { maskApiKey } from '../keys/api-key-text.js'
import { maskSecret, SECRET_FIELDS } from '../text/shown-body.js'

// A shorter value of a secret field could be any word of a report: masking it everywhere would
// garble messages (the rule maskStepSecrets keeps for failure messages too).
const MIN_SECRET_CHARS = 8

/**
 * The webhook signing secrets a run has seen, to mask by value wherever they turn up later.
 * Masking by field name misses a secret a step captured into a variable and sent in another
 * field (`"display_name": "{{secret}}"`), or one an answer echoes back under another name.
 */
export interface SeenSecrets {
  /** Notes the string value of every secret field (SECRET_FIELDS) in VALUE, at any depth. */
  collect(value: unknown): void
  /**
   * Notes the run's API key, masked as `--verbose` masks it in the Authorization header
   * (`sk_sandbox_abcd…wxyz`): a server or a proxy in front of it may echo it in an answer
   * ("The API key sk_sandbox_... is unknown."), which the reports would print whole.
   */
  addApiKey(key: string): void
  /** TEXT with every secret seen so far masked: a signing secret as maskSecret masks it (`whsec_****abcd`), the API key as maskApiKey does. */
  maskText(text: string): string
  /** VALUE copied with every secret seen so far masked in its strings, field names included. */
  maskValue<T>(value: T): T
}

/** An empty SeenSecrets: one per run, so the secrets of one step are masked in all that follow. */
export function createSeenSecrets(): SeenSecrets {
  // Each secret and how it is shown.
  const values = new Map<string, string>()
  // Longest first: a secret that holds a shorter one is masked whole, not around it.
  let ordered: string[] = []
  const add = (value: string, masked: string): void => {
    if (value.length < MIN_SECRET_CHARS || values.has(value)) return
    values.set(value, masked)
    ordered = [...values.keys()].sort((a, b) => b.length - a.length)
  }
  const collect = (value: unknown, field?: string): void => {
    if (typeof value === 'string') {
      if (field !== undefined && SECRET_FIELDS.has(field)) add(value, maskSecret(value))
    } else if (Array.isArray(value)) for (const item of value) collect(item)
    else if (value !== null && typeof value === 'object') for (const [name, item] of Object.entries(value)) collect(item, name)
  }
  const maskText = (text: string): string => ordered.reduce((masked, secret) => masked.split(secret).join(values.get(secret)!), text)
  const maskValue = (value: unknown): unknown => {
    if (typeof value === 'string') return maskText(value)
    if (Array.isArray(value)) return value.map(maskValue)
    if (value === null || typeof value !== 'object') return value
    // Names too: an answer may key a record by the API key (a gateway's quota per key).
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [maskText(name), maskValue(item)]))
  }
  return { collect: (value) => collect(value), addApiKey: (key) => add(key, maskApiKey(key)), maskText, maskValue: <T>(value: T) => (ordered.length === 0 ? value : maskValue(value) as T) }
}
