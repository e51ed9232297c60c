import ipaddr from 'ipaddr.js'
import { suggestClosest } from '../text/closest-match.js'
import type { Scenario } from './scenario-schema.js'

/** A scenario asked for by id that does not exist. */
export class UnknownScenarioError extends Error {
  override name = 'UnknownScenarioError'
  constructor(readonly ids: string[], known: string[]) {
    super(`unknown scenario${ids.length === 1 ? '' : 's'} ${ids.map((id) => `${id}${suggestClosest(id, known)}`).join(', ')}; known: ${known.join(', ')}`)
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

/**
 * True when the base URL points at this machine (a server we may expect to reach us back): the
 * name localhost (a trailing dot included), or a loopback or unspecified address in any notation,
 * IPv4 mapped into IPv6 (`[::ffff:127.0.0.1]`, which URL rewrites to `[::ffff:7f00:1]`) included.
 */
export function isLoopbackUrl(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '')
  if (/^localhost\.?$/i.test(host)) return true
  if (!ipaddr.isValid(host)) return false
  // process() turns an IPv4-mapped IPv6 address into its IPv4 one, whose range is then told.
  // Connecting to 0.0.0.0 or :: reaches this machine as well.
  const range = ipaddr.process(host).range()
  return range === 'loopback' || range === 'unspecified'
}

/** Whether a scenario registers the runner's receiver (refers to `{{$receiver_url}}`). */
export function usesReceiver(scenario: Scenario): boolean {
  return JSON.stringify(scenario.steps).includes('$receiver_url')
}
