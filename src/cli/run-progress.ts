import type { RunReport, ScenarioReport, StepReport } from '../scenarios/report-types.js'
import type { Scenario } from '../scenarios/scenario-schema.js'
import { describeFailures } from '../scenarios/check-expectation.js'
import { describeNetworkError } from '../client/api-error.js'
import { formatWait, type RetryWait } from '../scenarios/connection-step.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { chalk, colorStatus, formatCount } from './output.js'

type Write = (line: string) => void

// Names, paths, notes and bodies come from scenario files and answers: each goes through show()
// (escapeControls) before it is coloured, so what it holds cannot act on the terminal.

/** Live, test-runner style progress of `sandbox run`: a header per scenario, a line per step. */
export function createRunProgress(write: Write) {
  return {
    onScenarioStart(scenario: Scenario): void {
      write(`${chalk.bold(show(scenario.id))} ${chalk.dim(`— ${show(scenario.name)}`)}`)
    },
    onStep(_scenario: Scenario, step: StepReport): void {
      const mark = step.ok ? chalk.green('✓') : chalk.red('✗')
      const status = step.status === null ? chalk.dim('---') : colorStatus(step.status)
      const parts = [`  ${mark}`, show(step.method).padEnd(7), show(step.path), status, step.error_code ? chalk.yellow(show(step.error_code)) : '', chalk.dim(`${Math.round(step.duration_ms)}ms`)]
      write(parts.filter(Boolean).join(' ') + (step.name && !step.name.startsWith(`${step.method} `) ? chalk.dim(`  ${show(step.name)}`) : ''))
      if (step.note) write(chalk.dim(`      ${show(step.note)}`))
      if (!step.ok) printFailure(write, step)
    },
    onScenarioEnd(report: ScenarioReport): void {
      if (report.status === 'skipped') write(`${chalk.yellow('-')} ${show(report.id)} ${chalk.dim(`skipped: ${show(report.error ?? '')}`)}`)
      // A failed step's lines say it already (a connection error's and a refused key's included).
      else if (report.error && report.steps.every((step) => step.ok)) write(chalk.red(`  ✗ ${show(report.error)}`))
      // Else a file's later steps would vanish from the report without a word.
      if (report.steps_not_run) write(chalk.dim(`  - ${formatCount(report.steps_not_run, 'later step')} not run: a scenario stops at its first failed step`))
    },
  }
}

function printFailure(write: Write, step: StepReport): void {
  if (step.sent?.body !== undefined) write(chalk.dim(`      sent ${show(JSON.stringify(step.sent.body) ?? '')}`))
  if (step.sent?.idempotency_key) write(chalk.dim(`      Idempotency-Key ${show(step.sent.idempotency_key)}`))
  for (const raw of describeFailures(step.failures)) {
    const line = show(raw)
    const colored = line.startsWith('  - ') ? chalk.green(line) : line.startsWith('  + ') ? chalk.red(line) : chalk.bold(line)
    write(`      ${colored}`)
  }
  if (step.received !== undefined) {
    const text = show(JSON.stringify(step.received) ?? '')
    write(chalk.dim(`      received ${text.length > 600 ? `${text.slice(0, 597)}...` : text}`))
  }
}

/** The closing summary; its last line is `N passed, N failed` (plus skipped when any). */
export function printRunSummary(write: Write, report: RunReport): void {
  const failed = report.scenarios.filter((scenario) => scenario.status === 'failed')
  write('')
  if (failed.length > 0) {
    write(chalk.red('Failed scenarios:'))
    for (const scenario of failed) write(`  ${chalk.red('✗')} ${show(scenario.id)} ${chalk.dim(show(scenario.file))}`)
    write('')
  }
  const rate = report.duration_ms > 0 ? Math.round((report.requests / report.duration_ms) * 1000) : 0
  write(chalk.dim(`${formatCount(report.scenarios.length, 'scenario')}, ${formatCount(report.requests, 'request')} in ${report.duration_ms} ms (${rate} req/s) against ${show(report.base_url)}${report.started_server ? ' (in-process server)' : ''}`))
  const summary = `${report.passed} passed, ${report.failed} failed${report.skipped > 0 ? `, ${report.skipped} skipped` : ''}`
  write(report.failed > 0 ? chalk.red(summary) : chalk.green(summary))
}

/**
 * The line printed before a retry's wait: a rate limit, a network error, a proxy's 502/503/504 or
 * a lost attempt still running. Without it a run waiting on a silent server looked stuck.
 */
export function formatRetryWait(wait: RetryWait, timeoutMs: number): string {
  const { reason, ms, attempt, maxAttempts, request } = wait
  const again = `${request.method} ${show(request.path)} again${request.method === 'POST' ? ' with the same Idempotency-Key' : ''}`
  if (reason === 'rate_limited') return `429 rate limited: waiting ${formatWait(ms)}, then ${again}`
  if (reason === 'gateway_error' && wait.injected) return `${wait.status} page injected by serve --faults (as a proxy in front of a server that is down answers): waiting ${formatWait(ms)}, then ${again} (attempt ${attempt + 1} of ${maxAttempts})`
  if (reason === 'gateway_error') return `${wait.status ?? 'gateway error'} from a proxy in front of the server (not the sandbox's own answer): waiting ${formatWait(ms)}, then ${again} (attempt ${attempt + 1} of ${maxAttempts})`
  if (reason === 'in_progress') return `409 IDEMPOTENCY_KEY_IN_PROGRESS (the attempt whose answer was lost is still running): waiting ${formatWait(ms)}, then ${again}`
  const why = describeNetworkError(wait.error)
  return `network error (${why === 'timed out' ? `no answer within ${timeoutMs / 1000} s` : why}): waiting ${formatWait(ms)}, then ${again} (attempt ${attempt + 1} of ${maxAttempts})`
}
