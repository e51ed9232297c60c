import { describeFailures } from './check-expectation.js'
import type { RunReport, ScenarioReport, StepReport } from './report-types.js'

// XML 1.0 cannot carry most control characters at all, even escaped.
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g // eslint-disable-line no-control-regex

function escapeXml(text: string): string {
  return text.replace(INVALID_XML, '').replace(/[&<>"']/g, (char) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[char]};`)
}

const seconds = (ms: number) => (ms / 1000).toFixed(3)

/**
 * One line per step, as the terminal shows it, for `<system-out>` and failure details; the step's
 * note (retries, a hint) on an indented line after it, as the terminal shows it too.
 */
export function formatStepLine(step: StepReport): string {
  const status = step.status === null ? '---' : String(step.status)
  const parts = [step.ok ? 'ok  ' : 'FAIL', `${step.index + 1}.`, step.method, step.path, status, step.error_code ?? '', `${Math.round(step.duration_ms)}ms`, `(${step.name})`]
  return parts.filter(Boolean).join(' ') + (step.note ? `\n      ${step.note}` : '')
}

/**
 * What went wrong in one failed step: a one-line message, and the step, what was sent, the diff
 * and what came back. `keyRefused`: the message is the step's note, which says what to do.
 */
export function describeStepFailure(step: StepReport, keyRefused = false): { message: string; details: string } {
  const lines = [
    `step ${step.index + 1} (${step.name}): ${step.method} ${step.path}`,
    // The hint or the retry count is often the answer to "why": a CI page shows only this text.
    ...(step.note ? [`note: ${step.note}`] : []),
    ...(step.sent?.body === undefined ? [] : [`sent: ${JSON.stringify(step.sent.body)}`]),
    ...(step.sent?.idempotency_key ? [`Idempotency-Key: ${step.sent.idempotency_key}`] : []),
    ...describeFailures(step.failures),
    ...(step.received === undefined ? [] : [`received: ${JSON.stringify(step.received)}`]),
  ]
  // A refused key fails every expectation of the step at once; what to do about it is the point.
  const summary = keyRefused && step.note ? step.note : step.failures.map((f) => f.message).join('; ')
  return { message: `step ${step.index + 1} (${step.name}): ${summary}`, details: lines.join('\n') }
}

/** What went wrong in a failed scenario: the step, what was sent, the diff and what came back. */
export function describeScenarioFailure(report: ScenarioReport): { message: string; details: string } {
  const step = report.steps.find((item) => !item.ok)
  if (!step) return { message: report.error ?? 'failed', details: report.error ?? '' }
  return describeStepFailure(step, report.key_refused)
}

/**
 * JUnit's "error" (the test could not run) rather than "failure" (a check did not hold): CI
 * systems show the two apart, and a server that cannot be reached, or that refuses the run's
 * key, is no failed expectation of the API.
 */
function errorType(report: ScenarioReport): string | undefined {
  if (report.connection_error) return 'ConnectionError'
  if (report.key_refused) return 'KeyRefused'
  if (report.interrupted) return 'Interrupted'
  return undefined
}

/**
 * `<testcase>` takes only name, time, classname and group in junit-10.xsd (a `file` attribute
 * makes the Jenkins xUnit plugin refuse the whole report), so the scenario's file is the first
 * line of its `<system-out>`.
 */
function testcase(report: ScenarioReport): string {
  const open = `    <testcase classname="scenarios.${escapeXml(report.id)}" name="${escapeXml(report.name)}" time="${seconds(report.duration_ms)}"`
  const body: string[] = []
  if (report.status === 'skipped') body.push(`      <skipped message="${escapeXml(report.error ?? 'skipped')}"/>`)
  if (report.status === 'failed') {
    const { message, details } = describeScenarioFailure(report)
    const error = errorType(report)
    const element = error ? 'error' : 'failure'
    body.push(`      <${element} message="${escapeXml(message)}" type="${error ?? 'AssertionError'}">${escapeXml(details)}</${element}>`)
  }
  const out = [`file: ${report.file}`, ...report.steps.map(formatStepLine)]
  body.push(`      <system-out>${escapeXml(out.join('\n'))}</system-out>`)
  return `${open}>\n${body.join('\n')}\n    </testcase>`
}

/**
 * The run as JUnit XML (one testsuite, one testcase per scenario), as CI systems read it. It keeps
 * to the Jenkins xUnit plugin's junit-10.xsd, the strictest schema CI tools check it against:
 * that schema has no `skipped` on `<testsuites>` (only on `<testsuite>`), so the plugin refuses a
 * file that has one.
 */
export function formatJunitReport(report: RunReport): string {
  const errors = report.scenarios.filter((scenario) => scenario.status === 'failed' && errorType(scenario)).length
  const counts = `tests="${report.scenarios.length}" failures="${report.failed - errors}" errors="${errors}"`
  const time = `time="${seconds(report.duration_ms)}"`
  return formatDocument(counts, report.skipped, time, report.started_at, [
    '    <properties>',
    `      <property name="base_url" value="${escapeXml(report.base_url)}"/>`,
    `      <property name="requests" value="${report.requests}"/>`,
    '    </properties>',
    ...report.scenarios.map(testcase),
  ])
}

/** The report's document around its suite's LINES: one testsuites holding one testsuite. */
function formatDocument(counts: string, skipped: number, time: string, startedAt: string, lines: string[]): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="sandbox run" ${counts} ${time}>`,
    `  <testsuite name="sandbox scenarios" ${counts} skipped="${skipped}" ${time} timestamp="${startedAt.slice(0, 19)}">`,
    ...lines,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

/** A scenario file's mistakes, for formatJunitStartError. */
export interface JunitFileProblems {
  file: string
  id: string
  /** Each mistake as `step 1: ...`, without the file. */
  problems: string[]
}

/**
 * The JUnit report of a run that could not start (exit 2): one `<error>` of type ScenarioError
 * per scenario file with mistakes, or else one for the run saying why (`MESSAGE`), of TYPE. A CI
 * reads the report file whatever the exit code, and an earlier run's report left in its place read as this one's.
 */
export function formatJunitStartError(message: string, files: JunitFileProblems[], startedAt: Date, type: 'ScenarioError' | 'UsageError'): string {
  const cases = files.length > 0
    ? files.map(({ file, id, problems }) => ({ classname: `scenarios.${id}`, name: file, message: problems[0] ?? message, details: problems.join('\n'), out: `file: ${file}` }))
    : [{ classname: 'scenarios', name: 'sandbox run', message: message.split('\n')[0]!, details: message, out: undefined }]
  const counts = `tests="${cases.length}" failures="0" errors="${cases.length}"`
  return formatDocument(counts, 0, 'time="0.000"', startedAt.toISOString(), cases.flatMap((item) => [
    `    <testcase classname="${escapeXml(item.classname)}" name="${escapeXml(item.name)}" time="0.000">`,
    `      <error message="${escapeXml(item.message)}" type="${files.length > 0 ? 'ScenarioError' : type}">${escapeXml(item.details)}</error>`,
    ...(item.out === undefined ? [] : [`      <system-out>${escapeXml(item.out)}</system-out>`]),
    '    </testcase>',
  ]))
}
