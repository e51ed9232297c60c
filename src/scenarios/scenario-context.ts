import { randomBytes } from 'node:crypto'
import type { TransportOptions } from '../client/request-types.js'
import type { StepReport } from './report-types.js'
import type { Scenario } from './scenario-schema.js'
import type { SeenSecrets } from './seen-secrets.js'
import type { WebhookInbox } from './webhook-inbox.js'

/** What a scenario needs from the run around it. */
export interface ScenarioContext {
  baseUrl: string
  /** Used as the scenario's "main" key; otherwise a fresh open-mode key per scenario. */
  apiKey?: string
  transport?: Omit<TransportOptions, 'baseUrl' | 'apiKey'>
  /** The server is on another machine: it cannot reach the runner's receiver, and its keys are not `sandbox keys` ones. */
  remote?: boolean
  /** The run's webhook receiver, started on first use. */
  getInbox(): Promise<WebhookInbox>
  /**
   * The run's signing secrets, masked by value in the step reports. The scenario notes those of
   * the webhooks it waits for; those of requests and answers are the caller's to note (runScenarios
   * does, as each attempt ends).
   */
  secrets?: SeenSecrets
  /**
   * Whether the server answered an earlier scenario of the run: a connection error then names the
   * step it stopped at, as one after an answered step of this scenario does.
   */
  serverAnswered?: boolean
  /** Called as each step finishes, for live progress. */
  onStep?(scenario: Scenario, step: StepReport): void
  /**
   * Cancels the scenario: its request or wait is cut off and runScenario rejects with the
   * signal's reason instead of returning a report (the scenario did not fail, it was stopped).
   */
  signal?: AbortSignal
}

/** A fresh, well-formed open-mode key. */
export function generateKey(label: string): string {
  return `sk_sandbox_run_${label.replace(/[^A-Za-z0-9]/g, '_').slice(0, 24)}_${randomBytes(10).toString('hex')}`
}
