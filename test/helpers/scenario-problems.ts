import { expect } from 'vitest'
import { parseScenario, ScenarioFileError } from '../../src/scenarios/load-scenarios.js'

/** The problems a scenario text is refused with, as `step field: message` (1-based step, `-` for none). */
export function problemsOf(text: string): string[] {
  try {
    parseScenario('scenarios/bad.json', text)
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioFileError)
    return (error as ScenarioFileError).problems.map((p) => `${p.step === undefined ? '-' : p.step + 1} ${p.field ?? '-'}: ${p.message}`)
  }
  throw new Error('expected the scenario to be refused')
}
