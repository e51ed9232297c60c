/**
 * The typed client of the partner API (`partner-sandbox/client`): what a partner's code or tests
 * need to call a sandbox, without loading the server (h3, storage, webhooks) the package root does.
 */
export { createSandboxClient, type SandboxClient, type SandboxClientOptions, type LoanAnswer, type CallOptions, type PostOptions, type Envelope } from './sandbox-client.js'
export type { StateAnswer, PartnerView, PartnerAnswer, PartnerWriteAnswer, WebhookStateView, WebhookAnswer, WebhookWriteAnswer, WebhookTestAnswer, WebhookRetryAnswer } from './sandbox-client.js'
export type { CreateLoanInput, LoanActionInput, LoanFlowInput, PartnerProfileInput, RepaymentFlowInput, WebhookEndpointInput, WebhookRetryInput } from './sandbox-client.js'
export { sendRequest } from './send-request.js'
export type { ClientAnswer, ClientRequest, TransportOptions } from './request-types.js'
export { SandboxApiError, SandboxConnectionError, SandboxRequestError } from './api-error.js'
export { ErrorCodes, ConflictReasons, type ErrorCode, type ConflictReason } from '../errors/codes.js'
export type * from '../domain/types.js'
export { useProxyFromEnvironment, createProxyDispatcher, readProxySettings, ProxySettingsError, type ProxySettings } from './proxy/index.js'
