import { z } from 'zod'
import { findClosestMatch } from '../text/closest-match.js'

const vocabularies = new WeakMap<z.ZodType, string[]>()

/** Every field name `schema` takes, at any depth: what a misspelt one is matched against. */
function listFieldNames(schema: z.ZodType): string[] {
  const known = vocabularies.get(schema)
  if (known) return known
  const names = new Set<string>()
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return
    if (!Array.isArray(node) && 'properties' in node && typeof node.properties === 'object' && node.properties !== null) {
      for (const name of Object.keys(node.properties)) names.add(name)
    }
    for (const value of Object.values(node)) visit(value)
  }
  // Built only when a document has an unknown field: a good one never pays for it.
  visit(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }))
  vocabularies.set(schema, [...names])
  return [...names]
}

/**
 * ` (did you mean expect?)` after zod's `Unrecognized key: "expcet"`; for several keys, each one
 * that has a close field name of `schema` (`status for "stauts", method for "methd"`). Nothing
 * when none has.
 */
export function suggestFieldNames(keys: string[], schema: z.ZodType): string {
  const matches = keys.flatMap((key) => {
    const match = findClosestMatch(key, listFieldNames(schema))
    return match === undefined ? [] : [keys.length === 1 ? match : `${match} for "${key}"`]
  })
  return matches.length === 0 ? '' : ` (did you mean ${matches.join(', ')}?)`
}

/** A zod issue's message, with the field names a typo meant when it is about unknown keys. */
export function describeSchemaIssue(issue: z.core.$ZodIssue, schema: z.ZodType): string {
  return issue.code === 'unrecognized_keys' ? `${issue.message}${suggestFieldNames(issue.keys, schema)}` : issue.message
}

/** `rules.0: Unrecognized key: "methd" (did you mean method?); rules.1.ms: ...`: a file's problems on one line. */
export function formatSchemaIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType): string {
  return issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${describeSchemaIssue(issue, schema)}`).join('; ')
}
