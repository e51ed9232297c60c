import type { RunReport, ScenarioReport, StepReport } from '../scenarios/report-types.js'
import type { Scenario } from '../scenarios/scenario-schema.js'
import { describeFailures } from '../scenarios/check-expectation.js'
import { chalk, colorStatus, formatCount } from './output.js'

type Write = (line: string) => void

/** Live, test-runner style progress of `sandbox run`: a header per scenario, a line per step. */
export function createRunProgress(write: Write) {
  return {
    onScenarioStart(scenario: Scenario): void {
      write(`${chalk.bold(scenario.id)} ${chalk.dim(`— ${scenario.name}`)}`)
    },
    onStep(_scenario: Scenario, step: StepReport): void {
      const mark = step.ok ? chalk.green('✓') : chalk.red('✗')
      const status = step.status === null ? chalk.dim('---') : colorStatus(step.status)
      const parts = [`  ${mark}`, step.method.padEnd(7), step.path, status, step.error_code ? chalk.yellow(step.error_code) : '', chalk.dim(`${Math.round(step.duration_ms)}ms`)]
      write(parts.filter(Boolean).join(' ') + (step.name && !step.name.startsWith(`${step.method} `) ? chalk.dim(`  ${step.name}`) : ''))
      if (step.note) write(chalk.dim(`      ${step.note}`))
      if (!step.ok) printFailure(write, step)
    },
    onScenarioEnd(report: ScenarioReport): void {
      if (report.status === 'skipped') write(`${chalk.yellow('-')} ${report.id} ${chalk.dim(`skipped: ${report.error}`)}`)
      else if (report.error) write(chalk.red(`  ✗ ${report.error}`))
    },
  }
}

function printFailure(write: Write, step: StepReport): void {
  if (step.sent?.body !== undefined) write(chalk.dim(`      sent ${JSON.stringify(step.sent.body)}`))
  if (step.sent?.idempotency_key) write(chalk.dim(`      Idempotency-Key ${step.sent.idempotency_key}`))
  for (const line of describeFailures(step.failures)) {
    const colored = line.startsWith('  - ') ? chalk.green(line) : line.startsWith('  + ') ? chalk.red(line) : chalk.bold(line)
    write(`      ${colored}`)
  }
  if (step.received !== undefined) {
    const text = JSON.stringify(step.received)
    write(chalk.dim(`      received ${text.length > 600 ? `${text.slice(0, 597)}...` : text}`))
  }
}

/** The closing summary; its last line is `N passed, N failed` (plus skipped when any). */
export function printRunSummary(write: Write, report: RunReport): void {
  const failed = report.scenarios.filter((scenario) => scenario.status === 'failed')
  write('')
  if (failed.length > 0) {
    write(chalk.red('Failed scenarios:'))
    for (const scenario of failed) write(`  ${chalk.red('✗')} ${scenario.id} ${chalk.dim(scenario.file)}`)
    write('')
  }
  const rate = report.duration_ms > 0 ? Math.round((report.requests / report.duration_ms) * 1000) : 0
  write(chalk.dim(`${formatCount(report.scenarios.length, 'scenario')}, ${formatCount(report.requests, 'request')} in ${report.duration_ms} ms (${rate} req/s) against ${report.base_url}${report.started_server ? ' (in-process server)' : ''}`))
  const summary = `${report.passed} passed, ${report.failed} failed${report.skipped > 0 ? `, ${report.skipped} skipped` : ''}`
  write(report.failed > 0 ? chalk.red(summary) : chalk.green(summary))
}
