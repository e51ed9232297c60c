import type { TransportOptions } from '../client/request-types.js'
import type { RunReport, ScenarioReport, StepReport } from './report-types.js'
import { readServerApiVersion, SCENARIOS_API_VERSION } from './api-version.js'
import { askConfigOnce, probeRegisteredOnly } from './ask-config.js'
import { hasFailedShippedScenario, listConfigDifferences } from './config-terms.js'
import { runScenario } from './run-scenario.js'
import { startRunServer, type RunServer } from './run-server.js'
import type { Scenario } from './scenario-schema.js'
import { isLoopbackUrl, usesReceiver } from './select-scenarios.js'
import { waitForServer } from './wait-for-server.js'
import { startWebhookInbox, type WebhookInbox } from './webhook-inbox.js'
import { createSeenSecrets, type SeenSecrets } from './seen-secrets.js'
import { hasAnsweredStep } from './connection-step.js'

/**
 * Per attempt of each request of a run. The client's 30 s suits a partner's code on any network;
 * a test runner talks to a sandbox that answers in milliseconds (no endpoint waits for a webhook
 * delivery), and at 30 s x 4 attempts a server that took connections but never answered held the
 * run for 2 minutes per request. 10 s leaves wide margin and ends such a run in about 40 s.
 */
export const RUN_TIMEOUT_MS = 10_000

/**
 * The longest Retry-After a run waits for. A rate limit is no failure of the API under test, so a
 * run waits what the server asks (`serve --rate-limit 5/300` asks for minutes) instead of the
 * client's 30 s, which failed the scenario; past this it fails the step at once and says why,
 * rather than park CI for longer.
 */
export const RUN_MAX_RETRY_AFTER_MS = 300_000

/** Options of a scenario run. */
export interface RunScenariosOptions {
  /** The server to walk; without one an in-process server is started on a free port. */
  baseUrl?: string | undefined
  /**
   * An in-process server from startRunServer, walked in place of `baseUrl` and left running:
   * runs that follow one another (`sandbox run --watch`) share one instead of each starting one.
   */
  server?: RunServer | undefined
  apiKey?: string | undefined
  /** Stop after the first failed scenario; the rest are reported as skipped. */
  bail?: boolean | undefined
  /** Run `local-only` scenarios even against a remote base URL. */
  includeLocalOnly?: boolean | undefined
  /**
   * Whether `baseUrl` is a server on another machine (local-only scenarios skipped, notes worded
   * for it); default: unless its host is this machine. For a remote server reached through a
   * local port forward (`ssh -L`), whose URL looks local.
   */
  remote?: boolean | undefined
  /**
   * The port the webhook receiver listens on, on 127.0.0.1 (0: any free one). Given, or with
   * `receiverUrl`, the receiver starts before the first scenario that uses it rather than with it.
   */
  receiverPort?: number | undefined
  /**
   * The public URL that reaches the receiver (a tunnel): `{{$receiver_url}}` is this plus
   * `/hooks/<run>`, and local-only scenarios that register the receiver run against a remote
   * server too. Absolute http(s), no trailing slash; checking it is the caller's part.
   */
  receiverUrl?: string | undefined
  /** Called once the receiver listens, when it is started up front (see `receiverPort`). */
  onReceiverStart?(receiver: { localUrl: string; publicUrl?: string }): void
  /** Wait up to this long for `baseUrl` to answer before the first scenario (a server just started in the background). */
  waitForServerMs?: number | undefined
  /** Called when the wait of `waitForServerMs` is over, whether the server answered or not. */
  onWaitEnd?(): void
  /** Called after the scenarios when a remote `baseUrl` answers an API version other than SCENARIOS_API_VERSION. */
  onApiVersion?(version: string): void
  /**
   * Called after the scenarios when a shipped one failed against `baseUrl` and its GET config
   * differs from fixtures/config.json, which they are written for: the figures that differ.
   */
  onConfigDiffers?(differences: string[]): void
  /**
   * Client settings; here `timeoutMs` defaults to RUN_TIMEOUT_MS, `maxRetryAfterMs` to
   * RUN_MAX_RETRY_AFTER_MS and `overMaxRetryAfter` to `return`.
   */
  transport?: Omit<TransportOptions, 'baseUrl' | 'apiKey'> | undefined
  /**
   * Where the run notes every signing secret it sends or gets, before `transport.onAttempt` hears
   * of the attempt, and masks them by value in its step reports; default a new one. Give one to
   * mask them in what `onAttempt` prints too (`sandbox run --verbose` does).
   */
  secrets?: SeenSecrets | undefined
  onScenarioStart?(scenario: Scenario): void
  onStep?(scenario: Scenario, step: StepReport): void
  onScenarioEnd?(report: ScenarioReport): void
  /**
   * Cancels the run: the request or wait in progress is cut off, the receiver and the server the
   * run started are stopped, and runScenarios rejects with the signal's reason (no report, and no
   * onScenarioEnd for the scenario cut off). Used by `sandbox run --watch` when a file changes.
   */
  signal?: AbortSignal | undefined
}

function skipped(scenario: Scenario, reason: string): ScenarioReport {
  return { id: scenario.id, name: scenario.name, file: scenario.file, tags: scenario.tags, status: 'skipped', duration_ms: 0, requests: 0, steps: [], error: reason }
}

/**
 * Runs scenarios one after another against a base URL (or a server it starts and stops itself)
 * and returns the whole report. A connection error ends the run: the rest are skipped.
 */
export async function runScenarios(scenarios: Scenario[], options: RunScenariosOptions = {}): Promise<RunReport> {
  const { signal } = options
  const startedAt = new Date()
  const started = performance.now()
  // The in-process server this run walks, and whether the run started it (and so stops it).
  let server: RunServer | undefined = options.server
  let ownServer = false
  let baseUrl = server?.url ?? options.baseUrl
  let inbox: Promise<WebhookInbox> | undefined
  const getInbox = () => (inbox ??= startWebhookInbox({ port: options.receiverPort, publicUrl: options.receiverUrl }))
  const localServer = !baseUrl || server !== undefined || (options.remote === undefined ? isLoopbackUrl(baseUrl) : !options.remote)
  // A remote server cannot reach this machine, save the receiver through the tunnel given.
  const skipsAsLocalOnly = (scenario: Scenario) => scenario.tags.includes('local-only') && !localServer && !options.includeLocalOnly && !(options.receiverUrl !== undefined && usesReceiver(scenario))
  const secrets = options.secrets ?? createSeenSecrets()
  if (options.apiKey !== undefined) secrets.addApiKey(options.apiKey)
  const onAttempt = options.transport?.onAttempt
  const transport = {
    ...options.transport,
    onAttempt: (...[request, answer, wire]: Parameters<NonNullable<TransportOptions['onAttempt']>>) => {
      secrets.collect([request.body, answer instanceof Error ? undefined : answer.body])
      onAttempt?.(request, answer, wire)
    },
    timeoutMs: options.transport?.timeoutMs ?? RUN_TIMEOUT_MS,
    maxRetryAfterMs: options.transport?.maxRetryAfterMs ?? RUN_MAX_RETRY_AFTER_MS,
    overMaxRetryAfter: options.transport?.overMaxRetryAfter ?? 'return',
  }
  const reports: ScenarioReport[] = []
  let stop: string | undefined
  // Asked once, and only when a run with a given key reaches a scenario that makes keys of its own.
  let probe: Promise<{ registeredOnly: boolean | undefined; requests: number }> | undefined
  let asked: { version: string | undefined; requests: number } | undefined
  let configRequests = 0
  try {
    signal?.throwIfAborted()
    // A tunnel points at a fixed port: a busy one is said before anything else starts or waits,
    // and so is where deliveries are awaited.
    if ((options.receiverPort !== undefined || options.receiverUrl !== undefined) && scenarios.some((scenario) => usesReceiver(scenario) && !skipsAsLocalOnly(scenario))) {
      const { localUrl, publicUrl } = await getInbox()
      options.onReceiverStart?.(publicUrl === undefined ? { localUrl } : { localUrl, publicUrl })
    }
    if (!baseUrl) {
      server = await startRunServer()
      ownServer = true
      baseUrl = server.url
    }
    else if (options.waitForServerMs && !server) {
      await waitForServer(baseUrl, options.waitForServerMs, signal)
      options.onWaitEnd?.()
    }
    for (const scenario of scenarios) {
      signal?.throwIfAborted()
      if (stop) {
        reports.push(skipped(scenario, stop))
        // Named as it is skipped, like a local-only one: a bare "1 skipped" leaves CI guessing which.
        options.onScenarioEnd?.(reports.at(-1)!)
        continue
      }
      if (skipsAsLocalOnly(scenario)) {
        const tunnel = usesReceiver(scenario) ? ", or --receiver-url for a tunnel to the runner's receiver" : ''
        reports.push(skipped(scenario, `local-only: needs a sandbox on this machine (use --tag local-only to run it anyway${tunnel})`))
        options.onScenarioEnd?.(reports.at(-1)!)
        continue
      }
      // Without --api-key every scenario's key is generated: a registered-keys server refuses the
      // first one and the run stops there, saying so (key_refused). With one, only the scenarios
      // that make more keys need open mode, and are skipped where the server lacks it.
      if (scenario.keys?.length && options.apiKey !== undefined && server === undefined) {
        if ((await (probe ??= probeRegisteredOnly(baseUrl, transport, signal))).registeredOnly) {
          reports.push(skipped(scenario, `needs open mode: it makes its own keys (${scenario.keys.join(', ')}), and this server accepts only registered keys (a generated key got 401 SANDBOX_API_KEY_INVALID)`))
          options.onScenarioEnd?.(reports.at(-1)!)
          continue
        }
      }
      options.onScenarioStart?.(scenario)
      const report = await runScenario(scenario, { baseUrl, apiKey: options.apiKey, transport, remote: !localServer, getInbox, secrets, serverAnswered: hasAnsweredStep(reports), onStep: options.onStep, ...(signal ? { signal } : {}) })
      reports.push(report)
      options.onScenarioEnd?.(report)
      if (report.connection_error) stop = `not run: the run stopped when ${report.id} could not reach the server`
      else if (report.key_refused) stop = `not run: the run stopped when the server refused ${report.id}'s key`
      else if (report.status === 'failed' && options.bail) stop = 'not run: --bail after a failed scenario'
    }
    // A remote server (the hosted sandbox) may have moved to a newer version: asked once, after
    // the scenarios reached it (never a second request to one that cannot be reached). A local
    // one is this package's `serve`, and costs no request of a scripted or rate-limited test server.
    if (!localServer && reports.some((report) => report.requests > 0) && !reports.some((report) => report.connection_error)) {
      asked = await readServerApiVersion(baseUrl, transport, options.apiKey, signal)
      if (asked.version !== undefined && asked.version !== SCENARIOS_API_VERSION) options.onApiVersion?.(asked.version)
    }
    // A server started with a partner's own terms (`serve --config`) fails the shipped scenarios
    // at steps that each name a limit, which reads as a broken sandbox: say the cause once. Asked
    // only after such a failure, so a passing run costs no request.
    if (server === undefined && options.onConfigDiffers && hasFailedShippedScenario(reports) && !reports.some((report) => report.connection_error || report.key_refused)) {
      const answer = await askConfigOnce(baseUrl, transport, options.apiKey, signal, Math.min(transport.timeoutMs, 2000))
      configRequests = answer?.attempts ?? 0
      const differences = answer?.status === 200 ? listConfigDifferences(answer.body) : []
      if (differences.length > 0) options.onConfigDiffers(differences)
    }
  } finally {
    // An inbox that could not listen has nothing to close, and must not keep the server open.
    await (await inbox?.catch(() => undefined))?.close()
    if (ownServer) await server?.close()
  }
  const count = (status: ScenarioReport['status']) => reports.filter((report) => report.status === status).length
  return {
    base_url: baseUrl,
    started_server: server !== undefined,
    api_version: server !== undefined ? SCENARIOS_API_VERSION : asked?.version ?? null,
    started_at: startedAt.toISOString(),
    duration_ms: Math.round(performance.now() - started),
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    requests: reports.reduce((sum, report) => sum + report.requests, 0) + ((await probe)?.requests ?? 0) + (asked?.requests ?? 0) + configRequests,
    scenarios: reports,
  }
}
