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
  /** TEXT with every secret seen so far masked as maskSecret masks it (`whsec_****abcd`). */
  maskText(text: string): string
  /** VALUE copied with every secret seen so far masked in its strings. */
  maskValue<T>(value: T): T
}

/** An empty SeenSecrets: one per run, so the secrets of one step are masked in all that follow. */
export function createSeenSecrets(): SeenSecrets {
  const values = new Set<string>()
  // Longest first: a secret that holds a shorter one is masked whole, not around it.
  let ordered: string[] = []
  const collect = (value: unknown, field?: string): void => {
    if (typeof value === 'string') {
      if (field !== undefined && SECRET_FIELDS.has(field) && value.length >= MIN_SECRET_CHARS && !values.has(value)) {
        values.add(value)
        ordered = [...values].sort((a, b) => b.length - a.length)
      }
    } else if (Array.isArray(value)) for (const item of value) collect(item)
    else if (value !== null && typeof value === 'object') for (const [name, item] of Object.entries(value)) collect(item, name)
  }
  const maskText = (text: string): string => ordered.reduce((masked, secret) => masked.split(secret).join(maskSecret(secret)), text)
  const maskValue = (value: unknown): unknown => {
    if (typeof value === 'string') return maskText(value)
    if (Array.isArray(value)) return value.map(maskValue)
    if (value === null || typeof value !== 'object') return value
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskValue(item)]))
  }
  return { collect: (value) => collect(value), maskText, maskValue: <T>(value: T) => (ordered.length === 0 ? value : maskValue(value) as T) }
}
