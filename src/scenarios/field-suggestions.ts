import { buildScenarioJsonSchema } from './scenario-json-schema.js'
import { findClosestMatch } from '../text/closest-match.js'

let fieldNames: string[] | undefined

/** Every field name a scenario file may hold, at any depth: what a misspelt one is matched against. */
function listFieldNames(): string[] {
  if (fieldNames) return fieldNames
  const names = new Set<string>()
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return
    if (!Array.isArray(node) && 'properties' in node && typeof node.properties === 'object' && node.properties !== null) {
      for (const name of Object.keys(node.properties)) names.add(name)
    }
    for (const value of Object.values(node)) visit(value)
  }
  // Built only when a file has an unknown field: loading good files never pays for it.
  visit(buildScenarioJsonSchema())
  fieldNames = [...names]
  return fieldNames
}

/**
 * ` (did you mean expect?)` after zod's `Unrecognized key: "expcet"`; for several keys, each one
 * that has a close field name (`status for "stauts", method for "methd"`). Nothing when none does.
 */
export function suggestFieldNames(keys: string[]): string {
  const matches = keys.flatMap((key) => {
    const match = findClosestMatch(key, listFieldNames())
    return match === undefined ? [] : [keys.length === 1 ? match : `${match} for "${key}"`]
  })
  return matches.length === 0 ? '' : ` (did you mean ${matches.join(', ')}?)`
}
