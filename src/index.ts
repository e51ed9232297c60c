/**
 * partner-sandbox as a library: the server factory and its building blocks. The CLI is a thin
 * layer over these exports.
 */
export { createSandbox, type Sandbox, type SandboxOptions, type RedisUrl } from './server/create-sandbox.js'
export { listenSandbox, type ListenOptions, type SandboxListener } from './server/listen.js'
export type { DeepPartial } from './server/config.js'
export type { DeliveryReport } from './webhooks/dispatcher.js'
export { parseRateLimit, DEFAULT_RATE_LIMIT, type RateLimit } from './server/rate-limiter.js'
export { readRequestLog, readRequestLogSince, type RequestLogEntry } from './server/request-log.js'
export { deleteSessionData } from './server/session-store.js'
export { ErrorCodes, ConflictReasons, type ErrorCode, type ConflictReason } from './errors/codes.js'
export { SandboxError } from './errors/sandbox-error.js'
export { SetupError } from './errors/setup-error.js'
export { StorageError } from './storage/storage-error.js'
export type * from './domain/types.js'
export { createSandboxClient, sendRequest, SandboxApiError, SandboxConnectionError } from './client/index.js'
export type { SandboxClient, SandboxClientOptions, LoanAnswer, PostOptions, ClientAnswer, ClientRequest, TransportOptions } from './client/index.js'
export { runScenarios, loadScenarios, loadScenarioFile, parseScenario, selectScenarios, formatJunitReport, ScenarioFileError, SHIPPED_SCENARIOS_DIR, scenarioSchema } from './scenarios/index.js'
export type { RunScenariosOptions, RunReport, ScenarioReport, StepReport, Scenario, ScenarioFile, ScenarioStep } from './scenarios/index.js'
export { signWebhook, verifyWebhook, computeSignature, generateWebhookSecret, WebhookVerificationError, DEFAULT_TOLERANCE_SECONDS, type WebhookVerificationCode, type HeaderSource } from './webhooks/signature.js'
export { verifyReceiver, startWebhookListener, buildVerifyBattery, buildSampleEvents, ReceiverUnreachableError } from './webhook-tools/index.js'
export type { VerifyReport, VerifyCaseResult, ReceivedWebhook, WebhookListenerOptions } from './webhook-tools/index.js'
export { buildOpenApiDocument } from './openapi/build-document.js'
