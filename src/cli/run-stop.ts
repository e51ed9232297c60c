import { CliError } from './cli-error.js'
import { CliErrorCodes } from '../errors/codes.js'
import { formatProxyHint } from './api-target.js'
import { hasAnsweredStep } from '../scenarios/connection-step.js'
import type { RunReport, ScenarioReport } from '../scenarios/report-types.js'

/** A server that answers with a redirect, an untrusted certificate or plain HTTP is running: its message says what to fix. */
const RUNNING = /redirect to|its TLS certificate |answers plain HTTP, not TLS|answers https only|proxy answered|fetch refuses port|serve --faults answered|not the sandbox API's JSON/

/** What `describeRunStop` needs of the run's setup. */
export interface RunStopSetup {
  baseUrl?: string
  /** The proxy the requests went through, as said (password masked). */
  proxy?: string
  waitForServerMs?: number
  /** `--wait` as given. */
  wait?: string
}

/** What to check about a server the run could not reach at UNREACHABLE's failed step. */
function describeUnreachableHint(report: RunReport, unreachable: ScenarioReport, setup: RunStopSetup): string {
  if (RUNNING.test(unreachable.error ?? '')) return ''
  if (setup.proxy) return formatProxyHint(setup.proxy, setup.baseUrl!)
  // It answered before: "is it running? --wait" would send the reader after a server that started fine.
  if (hasAnsweredStep(report.scenarios)) {
    return /\(timed out after /.test(unreachable.error ?? '')
      ? '; the server answered earlier steps of this run, then not this one in time: it may be stuck or overloaded (its log says), or this request needs a longer --timeout'
      : '; the server answered earlier steps of this run, then stopped taking connections: it may have crashed or restarted (its log says why)'
  }
  // Given --wait, the run waited already: advising it would send the reader round in a circle.
  return `; is the server running? (sandbox serve; ${setup.waitForServerMs ? `nothing answered within --wait ${setup.wait}` : '--wait 30s if it is still starting'}; or leave out --base-url to start one in-process)`
}

/**
 * The error a run that stopped on setup ends with (exit 2): a server it could not reach, with
 * what to check, or one that refused its key. Undefined when the run did not stop.
 */
export function describeRunStop(report: RunReport, setup: RunStopSetup): CliError | undefined {
  const unreachable = report.scenarios.find((scenario) => scenario.connection_error)
  if (unreachable) return new CliError(`${unreachable.error}${describeUnreachableHint(report, unreachable, setup)}`, { code: CliErrorCodes.UNREACHABLE })
  // A refused key is setup, like an unreachable server: the scenarios after it were not run.
  const refused = report.scenarios.find((scenario) => scenario.key_refused)
  if (refused) return new CliError(`${refused.id}: ${refused.steps.find((step) => !step.ok)?.note ?? 'the server refused the run\'s key'}; the run stopped there`, { code: CliErrorCodes.KEY_REFUSED })
  return undefined
}
