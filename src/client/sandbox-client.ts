import type { LoanStateView } from '../domain/loan-book.js'
import type { SandboxConfig } from '../domain/types.js'
import type { z } from 'zod'
import type { createLoanSchema } from '../schemas/create-loan.js'
import type { loanActionSchema } from '../schemas/loan-action.js'
import type { partnerProfileSchema } from '../schemas/partner.js'
import type { webhookRetrySchema } from '../schemas/webhooks.js'
import type { partnerViewSchema } from '../schemas/responses/partner-view.js'
import type { webhookRetryAnswerSchema, webhookTestAnswerSchema } from '../schemas/responses/answers.js'
import type { webhookStateViewSchema } from '../schemas/responses/webhook-views.js'
import type { EventType } from '../domain/types.js'
import { describeInjectedPage, NOT_SANDBOX_ANSWER, SandboxApiError } from './api-error.js'
import type { LoanFlowInput, RepaymentFlowInput } from './flow-requests.js'
import { sendRequest } from './send-request.js'
import type { ClientAnswer, ClientRequest, TransportOptions } from './request-types.js'
import { findBaseUrlProblem, showBaseUrl } from './base-url.js'
import { findTransportNumberProblem } from './transport-numbers.js'
import { describeForeignAnswer } from './foreign-answer.js'
import { findApiKeyProblem } from './api-key-problem.js'

/** Fields every answer carries (decisions.md "Envelope"). */
export interface Envelope {
  request_id: string
}

/** A loan-changing POST's answer: the loan state plus whether it was a stored replay. */
export type LoanAnswer = Envelope & LoanStateView & { idempotency_replayed: boolean }

/** The partner profile, links, levels and rewards (GET /partner, and the `partner` block of GET /state). */
export type PartnerView = z.infer<typeof partnerViewSchema>
/** GET /state: the loan state and the partner block. */
export type StateAnswer = Envelope & { loans: LoanStateView; partner: PartnerView }
/** GET /partner. */
export type PartnerAnswer = Envelope & PartnerView
/** POST /partner. */
export type PartnerWriteAnswer = PartnerAnswer & { idempotency_replayed: boolean }
/** The endpoint (null before one is registered) and the delivery log. */
export type WebhookStateView = z.infer<typeof webhookStateViewSchema>
/** GET and DELETE /webhooks. */
export type WebhookAnswer = Envelope & WebhookStateView
/** POST /webhooks: `endpoint.signingSecret` is there only on first create and with `rotate_secret: true`. */
export type WebhookWriteAnswer = WebhookAnswer & { idempotency_replayed: boolean }
/** POST /webhooks/test. */
export type WebhookTestAnswer = z.infer<typeof webhookTestAnswerSchema>
/** POST /webhooks/retry. */
export type WebhookRetryAnswer = z.infer<typeof webhookRetryAnswerSchema>

export type { LoanFlowInput, RepaymentFlowInput } from './flow-requests.js'

/** Options of one call. */
export interface CallOptions {
  /** Cancels this call and its retries, as the client's `signal` cancels every call (either one does). */
  signal?: AbortSignal | undefined
}

/** Options of one POST. */
export interface PostOptions extends CallOptions {
  idempotencyKey?: string | undefined
}

/** Settings of a client; `baseUrl` is the server root, e.g. http://127.0.0.1:4010. */
export type SandboxClientOptions = TransportOptions

// Request bodies as a caller writes them: fields with defaults may be left out.
/** Body of POST /loans. */
export type CreateLoanInput = z.input<typeof createLoanSchema>
/** Body of POST /loans/{id}/action. */
export type LoanActionInput = z.input<typeof loanActionSchema>
/** Body of POST /partner. */
export type PartnerProfileInput = z.input<typeof partnerProfileSchema>
/**
 * Body of POST /webhooks. Written out rather than inferred: the server's schema takes any value
 * for these fields, so that their mistakes get the spec's own error codes.
 */
export interface WebhookEndpointInput {
  url: string
  /** Event types to receive; omitted means all. */
  events?: EventType[] | undefined
  /** true: issue a new signing secret and return it once. */
  rotate_secret?: boolean | undefined
}
/** Body of POST /webhooks/retry. */
export type WebhookRetryInput = z.input<typeof webhookRetrySchema>

/** The path of a loan's `action` or `repayment-flow` endpoint (the id escaped, as it comes from an answer or a flag). */
export function buildLoanPath(loanId: string, tail: 'action' | 'repayment-flow'): string {
  return `/api/sandbox/loans/${encodeURIComponent(loanId)}/${tail}`
}

/**
 * A typed client of the whole `/api/sandbox` API. Every method resolves with the parsed answer on
 * a 2xx of the API (one carrying request_id) and rejects with a SandboxApiError (status,
 * error_code, request_id) otherwise; network errors
 * and 429 are retried with the same Idempotency-Key and body.
 */
export function createSandboxClient(options: SandboxClientOptions) {
  // At once, rather than as every call's "Invalid URL" (retried) or 404.
  if (typeof options.baseUrl !== 'string') throw new TypeError(`baseUrl is ${String(options.baseUrl)}: give the server's root, as http://HOST:PORT (from an environment variable that is not set?)`)
  const problem = findBaseUrlProblem(options.baseUrl)
  if (problem) throw new TypeError(`baseUrl ${showBaseUrl(options.baseUrl)} ${problem}`)
  const numbers = findTransportNumberProblem(options)
  if (numbers) throw new TypeError(numbers)
  // At once, rather than as every call's SandboxRequestError (which printed the key) or a 401.
  const keyProblem = typeof options.apiKey === 'string' ? findApiKeyProblem(options.apiKey) : undefined
  if (keyProblem) throw new TypeError(keyProblem)
  async function call<T>(request: ClientRequest): Promise<T> {
    const answer = await sendRequest(options, request)
    if (answer.status < 200 || answer.status >= 300) {
      throw new SandboxApiError(answer.status, answer.errorCode, answer.requestId, answer.body ?? answer.text, request.method, request.path, answer.headers.get('location'), describeInjectedPage(answer) ?? describeForeignAnswer(answer, options.baseUrl), answer.idempotencyKey)
    }
    // The spec's every answer carries request_id: a 2xx without it is another server (a webhook
    // receiver's port given as the base URL), whose body the typed methods would crash on later.
    const body: unknown = answer.body
    if (!body || typeof body !== 'object' || Array.isArray(body) || typeof (body as { request_id?: unknown }).request_id !== 'string') {
      throw new SandboxApiError(answer.status, null, answer.requestId, body ?? answer.text, request.method, request.path, null, NOT_SANDBOX_ANSWER, answer.idempotencyKey)
    }
    return body as T
  }
  const post = <T>(path: string, body: unknown, postOptions: PostOptions = {}) =>
    call<T>({ method: 'POST', path, body, idempotencyKey: postOptions.idempotencyKey, signal: postOptions.signal })
  const get = <T>(path: string, o: CallOptions = {}) => call<T>({ method: 'GET', path, signal: o.signal })

  return {
    /** Sends any request and returns the answer whatever its status (for tools and tests). */
    request: (request: ClientRequest): Promise<ClientAnswer> => sendRequest(options, request),
    getConfig: (o?: CallOptions) => get<Envelope & SandboxConfig>('/api/sandbox/config', o),
    getState: (o?: CallOptions) => get<StateAnswer>('/api/sandbox/state', o),
    listLoans: (o?: CallOptions) => get<Envelope & LoanStateView>('/api/sandbox/loans', o),
    createLoan: (body: CreateLoanInput, o?: PostOptions) => post<LoanAnswer>('/api/sandbox/loans', body, o),
    loanFlow: (body: LoanFlowInput, o?: PostOptions) => post<LoanAnswer>('/api/sandbox/loans/flow', body, o),
    loanAction: (loanId: string, body: LoanActionInput, o?: PostOptions) => post<LoanAnswer>(buildLoanPath(loanId, 'action'), body, o),
    repaymentFlow: (loanId: string, body: RepaymentFlowInput, o?: PostOptions) => post<LoanAnswer>(buildLoanPath(loanId, 'repayment-flow'), body, o),
    getPartner: (o?: CallOptions) => get<PartnerAnswer>('/api/sandbox/partner', o),
    updatePartner: (body: PartnerProfileInput, o?: PostOptions) => post<PartnerWriteAnswer>('/api/sandbox/partner', body, o),
    getWebhook: (o?: CallOptions) => get<WebhookAnswer>('/api/sandbox/webhooks', o),
    setWebhook: (body: WebhookEndpointInput, o?: PostOptions) => post<WebhookWriteAnswer>('/api/sandbox/webhooks', body, o),
    deleteWebhook: (o?: CallOptions) => call<WebhookAnswer>({ method: 'DELETE', path: '/api/sandbox/webhooks', signal: o?.signal }),
    testWebhook: (o?: PostOptions) => post<WebhookTestAnswer>('/api/sandbox/webhooks/test', {}, o),
    retryWebhooks: (body: WebhookRetryInput, o?: PostOptions) => post<WebhookRetryAnswer>('/api/sandbox/webhooks/retry', body, o),
  }
}

/** A client made by createSandboxClient. */
export type SandboxClient = ReturnType<typeof createSandboxClient>
