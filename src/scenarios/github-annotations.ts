import { escapeControls } from '../cli/escape-controls.js'
import { describeScenarioFailure, describeStepFailure } from './junit-report.js'
import type { RunReport, ScenarioReport } from './report-types.js'
import { formatWorkflowCommand } from './workflow-command.js'

/** Where a scenario file is in the repository a workflow checked out. */
export interface ScenarioLocation {
  /** The file's path from the workspace, with `/` separators; none outside it. */
  path?: string
  /** The 1-based line of each step (see findStepLines); none when the text could not be mapped. */
  stepLines?: number[]
}

/** What `formatGithubAnnotations` needs besides the report. */
export interface GithubAnnotationOptions {
  /** Each scenario's location, by its report's `file`; a scenario without one gets no file or line. */
  locations?: ReadonlyMap<string, ScenarioLocation>
  /** The message the run stops with when a scenario could not reach the server or its key was refused. */
  stopMessage?: string
}

// A failed step's answer body can be large; the annotation is read on a pull request.
const MAX_MESSAGE_CHARS = 4000

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 3)}...` : text
}

const title = (text: string) => escapeControls(text)
const message = (text: string) => escapeControls(clip(text), { keepNewlines: true })

function annotateScenario(scenario: ScenarioReport, options: GithubAnnotationOptions): string[] {
  // Setup, not a step of this file: the server or its keys are what to fix.
  if (scenario.connection_error || scenario.key_refused) {
    const text = options.stopMessage ?? describeScenarioFailure(scenario).message
    return [formatWorkflowCommand('error', { title: title(`${scenario.id}: the run stopped`) }, message(text))]
  }
  const where = options.locations?.get(scenario.file)
  const file = where?.path
  const failed = scenario.steps.filter((step) => !step.ok)
  // An error outside an expectation (its text names the step) has no step report to place.
  if (failed.length === 0) return [formatWorkflowCommand('error', { file, title: title(scenario.id) }, message(scenario.error ?? 'failed'))]
  return failed.map((step) => formatWorkflowCommand('error', {
    file,
    line: file === undefined ? undefined : where?.stepLines?.[step.index],
    title: title(`${scenario.id}: step ${step.index + 1} (${step.name})`),
  }, message(describeStepFailure(step).details)))
}

/**
 * GitHub Actions `::error` workflow commands for a run: one per failed step, at its file and line
 * when the file is in the workspace, and one without a file for a scenario that stopped the run
 * on setup (an unreachable server, a refused key). Control characters are escapes, as on a terminal.
 */
export function formatGithubAnnotations(report: RunReport, options: GithubAnnotationOptions = {}): string[] {
  return report.scenarios.filter((scenario) => scenario.status === 'failed').flatMap((scenario) => annotateScenario(scenario, options))
}
