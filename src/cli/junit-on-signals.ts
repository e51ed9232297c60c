import { writeFileSync } from 'node:fs'
import type { RunReport, ScenarioReport, StepReport } from '../scenarios/report-types.js'
import type { Scenario } from '../scenarios/scenario-schema.js'
import { onStopSignals } from './stop-signals.js'

/** The run's progress hooks, each also told to the hooks a caller already has. */
interface ProgressHooks {
  onScenarioStart?(scenario: Scenario): void
  onStep?(scenario: Scenario, step: StepReport): void
  onScenarioEnd?(report: ScenarioReport): void
  onWaitEnd?(): void
}

interface PartialRun {
  file: string
  scenarios: Scenario[]
  baseUrl: string
  startedServer: boolean
  /** `--wait` as given, when the run waits for `baseUrl` to answer before its first scenario. */
  wait?: string | undefined
  formatJunitReport(report: RunReport): string
}

/**
 * While `sandbox run --junit FILE` runs, SIGINT, SIGTERM or SIGHUP (a cancelled or timed-out CI
 * job, a closed terminal) writes FILE with what the run got to before the process ends by the signal: the scenarios that
 * ended, the one running as an error of type Interrupted with its steps so far, the rest skipped.
 * Without it a cancelled job left no report, and the step it hung on could not be seen.
 * Returns the hooks to run with (wrapping `inner`) and `dispose`, called once the run's own
 * report is written.
 */
export function writeJunitOnSignals(run: PartialRun, inner: ProgressHooks): { hooks: Required<ProgressHooks>; dispose(): void } {
  const started = Date.now()
  const ended: ScenarioReport[] = []
  let current: Interrupted | undefined
  // A job stopped while the server it waits for never came up: all skipped would read as nothing wrong.
  let waiting = run.wait !== undefined
  const onSignal = (signal: NodeJS.Signals) => {
    dispose()
    const first = waiting && ended.length === 0 && !current ? run.scenarios[0] : undefined
    if (first) current = { scenario: first, steps: [], started: Date.now(), error: `interrupted by ${signal} while waiting for ${run.baseUrl} to answer (--wait ${run.wait}): it had not answered` }
    try {
      writeFileSync(run.file, run.formatJunitReport(buildInterruptedReport(run, ended, current, signal, started)))
      process.stderr.write(`sandbox: stopped by ${signal}: the JUnit report in ${run.file} holds the ${ended.length} scenario${ended.length === 1 ? '' : 's'} that ended${current ? ` and ${current.scenario.id}, ${current.error ?? 'interrupted'}` : ''}\n`)
    } catch (error) {
      process.stderr.write(`sandbox: stopped by ${signal}; cannot write the JUnit report to ${run.file}: ${(error as Error).message}\n`)
    }
    // Another handler (--json's INTERRUPTED document, PID 1's exit) ends the process as it decides.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  // First, so the file is written before a handler that ends the process runs.
  const dispose = onStopSignals(onSignal, { prepend: true })
  return {
    dispose,
    hooks: {
      onWaitEnd() {
        waiting = false
        inner.onWaitEnd?.()
      },
      onScenarioStart(scenario) {
        current = { scenario, steps: [], started: Date.now() }
        inner.onScenarioStart?.(scenario)
      },
      onStep(scenario, step) {
        current?.steps.push(step)
        inner.onStep?.(scenario, step)
      },
      onScenarioEnd(report) {
        ended.push(report)
        current = undefined
        inner.onScenarioEnd?.(report)
      },
    },
  }
}

/** The scenario the run was in, or about to start while it waited for the server (`error` says so). */
interface Interrupted {
  scenario: Scenario
  steps: StepReport[]
  started: number
  error?: string
}

function buildInterruptedReport(run: PartialRun, ended: ScenarioReport[], current: Interrupted | undefined, signal: NodeJS.Signals, started: number): RunReport {
  const toReport = (scenario: Scenario, status: ScenarioReport['status'], error: string, steps: StepReport[] = [], durationMs = 0): ScenarioReport =>
    ({ id: scenario.id, name: scenario.name, file: scenario.file, tags: scenario.tags, status, duration_ms: durationMs, requests: steps.length, steps, error })
  const done = new Set(ended.map((report) => report.id))
  if (current) done.add(current.scenario.id)
  const running = current && { ...toReport(current.scenario, 'failed', current.error ?? `interrupted by ${signal} during this scenario`, current.steps, Date.now() - current.started), interrupted: true }
  const notRun = run.scenarios.filter((scenario) => !done.has(scenario.id)).map((scenario) => toReport(scenario, 'skipped', `not run: the run was stopped by ${signal}`))
  const scenarios = [...ended, ...(running ? [running] : []), ...notRun]
  const count = (status: ScenarioReport['status']) => scenarios.filter((report) => report.status === status).length
  return {
    base_url: run.baseUrl,
    started_server: run.startedServer,
    api_version: null,
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    requests: scenarios.reduce((sum, report) => sum + report.requests, 0),
    scenarios,
  }
}
