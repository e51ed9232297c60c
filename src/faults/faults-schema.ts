import { z } from 'zod'
import { SetupError } from '../errors/setup-error.js'
import { formatSchemaIssues } from '../schemas/field-suggestions.js'
import { findClosestMatch } from '../text/closest-match.js'
import { isMaskedKey, isWellFormedKey } from '../keys/api-key-text.js'

/** Statuses a `status` fault may answer: the ones a partner's client must survive. */
export const FAULT_STATUSES = [500, 502, 503, 504, 429] as const

const match = {
  method: z.enum(['GET', 'POST', 'DELETE']).optional(),
  path: z.string().startsWith('/', 'must start with /').refine((path) => !path.slice(0, -1).includes('*'), 'only a trailing * is allowed')
    // Either would match no request that is ever faulted: API paths have neither, and the 404 for one is not faulted.
    .refine((path) => path === '/' || !path.endsWith('/'), 'API paths have no trailing / (one gets a 404, which is never faulted): remove it, or end a prefix with *')
    .refine((path) => !/[?#]/.test(path), 'a path is matched without its query: leave out the ? and what follows')
    .optional(),
  // A key the API refuses, or one copied masked from a log line, would fault no request.
  key: z.string()
    .refine((key) => isWellFormedKey(key) || isMaskedKey(key), 'not a sandbox API key (sk_sandbox_ followed by at least 16 letters, digits or _)')
    .refine((key) => !isMaskedKey(key), 'that is a key as logs show it, masked: give the whole key')
    .optional(),
}
const select = {
  rate: z.number().min(0).max(1).optional(),
  every: z.number().int().positive().optional(),
  first_attempt: z.literal(true).optional(),
}

const latencyRule = z.strictObject({ ...match, ...select, fault: z.literal('latency'), ms: z.number().int().min(0).max(60_000) })
const statusRule = z.strictObject({
  ...match,
  ...select,
  fault: z.literal('status'),
  status: z.literal([...FAULT_STATUSES]),
  retry_after: z.number().int().min(0).max(3600).optional(),
})
const dropRule = z.strictObject({ ...match, ...select, fault: z.enum(['drop_before', 'drop_after']) })

const ruleSchema = z.discriminatedUnion('fault', [latencyRule, statusRule, dropRule]).superRefine((rule, ctx) => {
  const given = (['rate', 'every', 'first_attempt'] as const).filter((name) => rule[name] !== undefined)
  if (given.length > 1) ctx.addIssue({ code: 'custom', path: [given[1]!], message: `use one of rate, every and first_attempt per rule (this one has ${given.join(' and ')})` })
})

/** The `--faults FILE` document: which requests the sandbox fails on purpose, and how. */
export const faultsSchema = z.strictObject({
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
  rules: z.array(ruleSchema),
})

/** Fault injection settings (`sandbox serve --faults FILE`, createSandbox's `faults`). */
export type FaultsConfig = z.infer<typeof faultsSchema>
/** One rule of a FaultsConfig. */
export type FaultRule = FaultsConfig['rules'][number]

/**
 * Checks a fault injection document; a mistake is a SetupError naming each field by its path
 * (`rules.1.status: ...`), so the file can be fixed before the server starts.
 */
export function parseFaults(value: unknown, source = 'faults'): FaultsConfig {
  const result = faultsSchema.safeParse(value)
  if (result.success) return result.data
  const issues = result.error.issues.map((issue) => explainMissingFault(issue, value))
  throw new SetupError(`${source} is not a valid fault injection file: ${formatSchemaIssues(issues, faultsSchema)}`)
}

/**
 * A rule without `fault` gets zod's "Invalid discriminator value" only, which looks at no other
 * key: a misspelt `"fualt"` got no "did you mean fault?", as a typo in any other field does. Such
 * a key is reported as the unknown key it is, which formatSchemaIssues matches to `fault`.
 */
function explainMissingFault(issue: z.core.$ZodIssue, value: unknown): z.core.$ZodIssue {
  const [rules, index, field] = issue.path
  if (issue.code !== 'invalid_union' || rules !== 'rules' || typeof index !== 'number' || field !== 'fault' || issue.path.length !== 3) return issue
  const rule: unknown = (value as { rules?: unknown[] }).rules?.[index]
  if (typeof rule !== 'object' || rule === null || 'fault' in rule) return issue
  const key = Object.keys(rule).find((name) => findClosestMatch(name, ['fault']) !== undefined)
  return key === undefined ? issue : { code: 'unrecognized_keys', keys: [key], path: ['rules', index], message: `Unrecognized key: "${key}"` }
}
