export { createSandboxClient, type SandboxClient, type SandboxClientOptions, type LoanAnswer, type PostOptions, type Envelope } from './sandbox-client.js'
export type { CreateLoanInput, LoanActionInput, LoanFlowInput, PartnerProfileInput, RepaymentFlowInput, WebhookEndpointInput, WebhookRetryInput } from './sandbox-client.js'
export { sendRequest, type ClientAnswer, type ClientRequest, type TransportOptions } from './send-request.js'
export { SandboxApiError, SandboxConnectionError } from './api-error.js'
