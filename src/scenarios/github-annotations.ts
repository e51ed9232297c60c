import { clipText } from '../text/clip-text.js'
import { escapeControls } from '../text/escape-controls.js'
import { hasAnsweredStep } from './connection-step.js'
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
/** GitHub keeps 10 error annotations of a step and drops the rest without a word. */
export const MAX_GITHUB_ERROR_ANNOTATIONS = 10

const title = (text: string) => escapeControls(text)
const message = (text: string) => escapeControls(clipText(text, MAX_MESSAGE_CHARS), { keepNewlines: true })

function annotateScenario(scenario: ScenarioReport, options: GithubAnnotationOptions, answered: boolean): string[] {
  // Setup, not a step of this file: the server or its keys are what to fix.
  if (scenario.connection_error || scenario.key_refused) {
    const text = options.stopMessage ?? describeScenarioFailure(scenario).message
    // Which step it stopped at, once the server had answered the run (as the run's message says):
    // before that, the server is what to look at whatever the step.
    const step = answered ? scenario.steps.find((item) => !item.ok) : undefined
    const at = step ? ` step ${step.index + 1} (${step.name}):` : ''
    return [formatWorkflowCommand('error', { title: title(`${scenario.id}:${at} the run stopped`) }, message(text))]
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
 * on setup (an unreachable server, a refused key), first. Control characters are escapes, as on a
 * terminal. At most MAX_GITHUB_ERROR_ANNOTATIONS, the last saying how many more failed.
 */
export function formatGithubAnnotations(report: RunReport, options: GithubAnnotationOptions = {}): string[] {
  const failed = report.scenarios.filter((scenario) => scenario.status === 'failed')
  // The setup stop is why the run ended with exit 2: it must not be the annotation GitHub drops.
  const stops = failed.filter((scenario) => scenario.connection_error || scenario.key_refused)
  const all = [...stops, ...failed.filter((scenario) => !stops.includes(scenario))].flatMap((scenario) => annotateScenario(scenario, options, hasAnsweredStep(report.scenarios)))
  if (all.length <= MAX_GITHUB_ERROR_ANNOTATIONS) return all
  const more = all.length - MAX_GITHUB_ERROR_ANNOTATIONS + 1
  return [...all.slice(0, MAX_GITHUB_ERROR_ANNOTATIONS - 1), formatWorkflowCommand('error', { title: 'sandbox run' }, `${more} more failures are not annotated (GitHub shows ${MAX_GITHUB_ERROR_ANNOTATIONS} error annotations per step): the job summary and the log have them all`)]
}
