import { relative, isAbsolute } from 'node:path'
import { isJsonObject } from '../json-text/is-json-object.js'
import { loadFixtures } from '../server/fixtures.js'
import { SHIPPED_SCENARIOS_DIR } from './load-scenarios.js'
import type { ScenarioReport } from './report-types.js'

/** At most this many figures are named; the rest are counted. */
const MAX_NAMED = 8

/** True for a scenario file shipped with the package: those are written for fixtures/config.json. */
export function isShippedScenario(file: string): boolean {
  const path = relative(SHIPPED_SCENARIOS_DIR, file)
  return path !== '' && !path.startsWith('..') && !isAbsolute(path)
}

/** Whether a shipped scenario failed at a step the server answered: then its config is worth asking. */
export function hasFailedShippedScenario(reports: ScenarioReport[]): boolean {
  return reports.some((report) => report.status === 'failed' && report.requests > 0 && isShippedScenario(report.file))
}

function collectDifferences(written: unknown, served: unknown, path: string, out: string[]): void {
  if (isJsonObject(written)) {
    for (const [key, value] of Object.entries(written)) collectDifferences(value, isJsonObject(served) ? served[key] : undefined, path ? `${path}.${key}` : key, out)
    return
  }
  if (JSON.stringify(written) !== JSON.stringify(served)) out.push(`${path} ${served === undefined ? '(missing)' : JSON.stringify(served)} (written for ${JSON.stringify(written)})`)
}

/**
 * The figures of a server's GET config answer that differ from fixtures/config.json, as
 * `limits.loan_amount.min 500 (written for 100)`; api_version is left to its own note. Empty when
 * the server runs on the default config.
 */
export function listConfigDifferences(served: unknown): string[] {
  const { api_version: _version, ...written } = loadFixtures().config
  const out: string[] = []
  collectDifferences(written, served, '', out)
  return out
}

/** The note `sandbox run` prints for listConfigDifferences' figures. */
export function describeConfigDifferences(differences: string[]): string {
  const named = differences.slice(0, MAX_NAMED).join(', ')
  const more = differences.length > MAX_NAMED ? ` and ${differences.length - MAX_NAMED} more` : ''
  return `the server's config is not the one the shipped scenarios are written for (fixtures/config.json): ${named}${more}; a failure may come from it: run them against a sandbox serve without --config, or write scenarios for these terms`
}
