import { withPromptSignals } from './prompt-signals.js'
import { escapeControls } from '../text/escape-controls.js'
import type { Scenario } from '../scenarios/scenario-schema.js'

/** On a terminal, without named scenarios: ask which to run (all checked). */
export async function pickScenarios(scenarios: Scenario[]): Promise<Scenario[]> {
  const { checkbox } = await import('@inquirer/prompts')
  const ids = await withPromptSignals((signal) => checkbox({
    message: 'Which scenarios to run? (space toggles, a toggles all, enter runs)',
    choices: scenarios.map((scenario) => ({ name: escapeControls(`${scenario.id.padEnd(28)} ${scenario.name}`), value: scenario.id, checked: true })),
    required: true,
    pageSize: 20,
  }, { signal }))
  return scenarios.filter((scenario) => ids.includes(scenario.id))
}
