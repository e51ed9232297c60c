import type { Scenario } from './scenario-schema.js'

/** A scenario asked for by id that does not exist. */
export class UnknownScenarioError extends Error {
  override name = 'UnknownScenarioError'
  constructor(readonly ids: string[], known: string[]) {
    super(`unknown scenario${ids.length === 1 ? '' : 's'} ${ids.join(', ')}; known: ${known.join(', ')}`)
  }
}

/**
 * The scenarios to run: the ones named (by id, in the order named), else all; then only those
 * carrying one of `tags`, when given.
 */
export function selectScenarios(all: Scenario[], ids: string[] = [], tags: string[] = []): Scenario[] {
  const byId = new Map(all.map((scenario) => [scenario.id, scenario]))
  const missing = ids.filter((id) => !byId.has(id))
  if (missing.length > 0) throw new UnknownScenarioError(missing, [...byId.keys()])
  const chosen = ids.length > 0 ? [...new Set(ids)].map((id) => byId.get(id)!) : all
  return tags.length > 0 ? chosen.filter((scenario) => scenario.tags.some((tag) => tags.includes(tag))) : chosen
}

/** True when the base URL points at this machine (a server we may expect to reach us back). */
export function isLoopbackUrl(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || host === '::1' || /^127\./.test(host)
}
