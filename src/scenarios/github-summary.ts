import { clipText } from '../text/clip-text.js'
import { escapeControls } from '../text/escape-controls.js'
import { describeScenarioFailure, describeStepFailure } from './junit-report.js'
import type { RunReport, ScenarioReport } from './report-types.js'

/**
 * GitHub shows at most 1 MiB of a step's summary, and other commands of the step may write there
 * too: this run's part stays well under it, whatever the number of scenarios or size of answers.
 */
export const MAX_GITHUB_SUMMARY_BYTES = 256 * 1024
const MAX_CELL_CHARS = 300
const MAX_DETAILS = 20
const MAX_DETAIL_CHARS = 4000
// Room kept for the lines that say what was left out, and, in a failed run, for some failures'
// details: a long table must not crowd out what a failure was.
const RESERVE_BYTES = 1024
const DETAILS_BYTES = 96 * 1024

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

/** Text from a scenario or an answer as one table cell: Markdown and HTML characters are text, lines are `<br>`. */
function cell(text: string): string {
  return escapeControls(clipText(text, MAX_CELL_CHARS), { keepNewlines: true })
    .replace(/[\\`*_[\]|~]/g, '\\$&')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/\n/g, '<br>')
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

const STATUS = { passed: '✅ passed', failed: '❌ failed', skipped: '⏭️ skipped' }

function formatRow(scenario: ScenarioReport): string {
  const step = scenario.steps.find((item) => !item.ok)
  let failedStep = ''
  let note = scenario.status === 'skipped' ? (scenario.error ?? '') : ''
  if (scenario.status === 'failed') {
    failedStep = step ? describeStepFailure(step, scenario.key_refused).message : (scenario.error ?? 'failed')
    // A refused key's step message is its note already.
    note = scenario.key_refused ? '' : (step?.note ?? '')
  }
  const name = `${scenario.id}: ${scenario.name}`
  return `| ${[cell(name), STATUS[scenario.status], formatMs(scenario.duration_ms), cell(failedStep), cell(note)].join(' | ')} |`
}

/** A fenced block that no run of backticks in TEXT can close early. */
function fence(text: string): string[] {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const marks = '`'.repeat(Math.max(3, longest + 1))
  return [`${marks}text`, text, marks]
}

function formatDetails(scenario: ScenarioReport): string[] {
  const { details } = describeScenarioFailure(scenario)
  return [`#### ${cell(scenario.id)}`, '', ...fence(escapeControls(clipText(details, MAX_DETAIL_CHARS), { keepNewlines: true })), '']
}

/**
 * The run as Markdown for a GitHub Actions job summary (`GITHUB_STEP_SUMMARY`): a heading with the
 * counts, a table of scenarios with their status, failed step and note, then each failure's
 * details. Bounded by MAX_GITHUB_SUMMARY_BYTES: what does not fit is counted, not shown.
 */
export function formatGithubSummary(report: RunReport): string {
  const counts = `${report.passed} passed, ${report.failed} failed${report.skipped > 0 ? `, ${report.skipped} skipped` : ''}`
  const scenarios = report.scenarios.length === 1 ? '1 scenario' : `${report.scenarios.length} scenarios`
  const requests = report.requests === 1 ? '1 request' : `${report.requests} requests`
  const lines = [
    `## sandbox run: ${counts}`,
    '',
    `${scenarios}, ${requests} in ${formatMs(report.duration_ms)} against ${cell(report.base_url)}${report.started_server ? ' (in-process server)' : ''}`,
    '',
    '| Scenario | Status | Duration | Failed step | Note |',
    '|---|---|---|---|---|',
  ]
  let used = bytes(lines.join('\n'))
  const fits = (more: string[], reserve = RESERVE_BYTES) => used + bytes(more.join('\n')) + reserve <= MAX_GITHUB_SUMMARY_BYTES
  const failed = report.scenarios.filter((scenario) => scenario.status === 'failed')
  let rows = 0
  for (const scenario of report.scenarios) {
    const row = formatRow(scenario)
    if (!fits([row], RESERVE_BYTES + (failed.length > 0 ? DETAILS_BYTES : 0))) break
    lines.push(row)
    used += bytes(row) + 1
    rows++
  }
  const plural = (count: number, word: string) => `${count} more ${word}${count === 1 ? '' : 's'}`
  if (rows < report.scenarios.length) lines.push('', `${plural(report.scenarios.length - rows, 'scenario')} not listed: the summary is kept under ${MAX_GITHUB_SUMMARY_BYTES / 1024} KiB (the log and the JUnit report have them all).`)

  if (failed.length > 0) lines.push('', '### Failures', '')
  let shown = 0
  for (const scenario of failed.slice(0, MAX_DETAILS)) {
    const details = formatDetails(scenario)
    if (!fits(details)) break
    lines.push(...details)
    used += bytes(details.join('\n')) + 1
    shown++
  }
  if (shown < failed.length) lines.push(`Details left out for ${plural(failed.length - shown, 'failed scenario')} (at most ${MAX_DETAILS}, and under ${MAX_GITHUB_SUMMARY_BYTES / 1024} KiB in all): see the log or the JUnit report.`, '')
  return `${lines.join('\n').trimEnd()}\n`
}
