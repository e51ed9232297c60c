import type { LoanStateView } from '../domain/loan-book.js'
import type { SandboxConfig } from '../domain/types.js'
import type { z } from 'zod'
import type { createLoanSchema } from '../schemas/create-loan.js'
import type { loanActionSchema } from '../schemas/loan-action.js'
import type { loanFlowSchema } from '../schemas/loan-flow.js'
import type { partnerProfileSchema } from '../schemas/partner.js'
import type { repaymentFlowSchema } from '../schemas/repayment-flow.js'
import type { webhookEndpointSchema, webhookRetrySchema } from '../schemas/webhooks.js'
import { SandboxApiError } from './api-error.js'
import { sendRequest, type ClientAnswer, type ClientRequest, type TransportOptions } from './send-request.js'

/** Fields every answer carries (decisions.md "Envelope"). */
export interface Envelope {
  request_id: string
}

/** A loan-changing POST's answer: the loan state plus whether it was a stored replay. */
export type LoanAnswer = Envelope & LoanStateView & { idempotency_replayed: boolean }

/** Options of one POST. */
export interface PostOptions {
  idempotencyKey?: string
}

/** Settings of a client; `baseUrl` is the server root, e.g. http://127.0.0.1:4010. */
export type SandboxClientOptions = TransportOptions

// Request bodies as a caller writes them: fields with defaults may be left out.
/** Body of POST /loans. */
export type CreateLoanInput = z.input<typeof createLoanSchema>
/** Body of POST /loans/{id}/action. */
export type LoanActionInput = z.input<typeof loanActionSchema>
/** Body of POST /loans/flow. */
export type LoanFlowInput = z.input<typeof loanFlowSchema>
/** Body of POST /partner. */
export type PartnerProfileInput = z.input<typeof partnerProfileSchema>
/** Body of POST /loans/{id}/repayment-flow. */
export type RepaymentFlowInput = z.input<typeof repaymentFlowSchema>
/** Body of POST /webhooks. */
export type WebhookEndpointInput = z.input<typeof webhookEndpointSchema>
/** Body of POST /webhooks/retry. */
export type WebhookRetryInput = z.input<typeof webhookRetrySchema>

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A typed client of the whole `/api/sandbox` API. Every method resolves with the parsed answer on
 * 2xx and rejects with a SandboxApiError (status, error_code, request_id) otherwise; network errors
 * and 429 are retried with the same Idempotency-Key and body.
 */
export function createSandboxClient(options: SandboxClientOptions) {
  async function call<T>(request: ClientRequest): Promise<T> {
    const answer = await sendRequest(options, request)
    if (answer.status < 200 || answer.status >= 300) {
      throw new SandboxApiError(answer.status, answer.errorCode, answer.requestId, answer.body ?? answer.text, request.method, request.path)
    }
    return answer.body as T
  }
  const post = <T>(path: string, body: unknown, postOptions: PostOptions = {}) =>
    call<T>({ method: 'POST', path, body, idempotencyKey: postOptions.idempotencyKey })
  const loanPath = (loanId: string, tail: string) => `/api/sandbox/loans/${encodeURIComponent(loanId)}/${tail}`

  return {
    /** Sends any request and returns the answer whatever its status (for tools and tests). */
    request: (request: ClientRequest): Promise<ClientAnswer> => sendRequest(options, request),
    getConfig: () => call<Envelope & SandboxConfig>({ method: 'GET', path: '/api/sandbox/config' }),
    getState: () => call<Envelope & { loans: LoanStateView; partner: Json }>({ method: 'GET', path: '/api/sandbox/state' }),
    listLoans: () => call<Envelope & LoanStateView>({ method: 'GET', path: '/api/sandbox/loans' }),
    createLoan: (body: CreateLoanInput, o?: PostOptions) => post<LoanAnswer>('/api/sandbox/loans', body, o),
    loanFlow: (body: LoanFlowInput, o?: PostOptions) => post<LoanAnswer>('/api/sandbox/loans/flow', body, o),
    loanAction: (loanId: string, body: LoanActionInput, o?: PostOptions) => post<LoanAnswer>(loanPath(loanId, 'action'), body, o),
    repaymentFlow: (loanId: string, body: RepaymentFlowInput, o?: PostOptions) => post<LoanAnswer>(loanPath(loanId, 'repayment-flow'), body, o),
    getPartner: () => call<Envelope & Json>({ method: 'GET', path: '/api/sandbox/partner' }),
    updatePartner: (body: PartnerProfileInput, o?: PostOptions) => post<Envelope & Json>('/api/sandbox/partner', body, o),
    getWebhook: () => call<Envelope & Json>({ method: 'GET', path: '/api/sandbox/webhooks' }),
    setWebhook: (body: WebhookEndpointInput, o?: PostOptions) => post<Envelope & Json>('/api/sandbox/webhooks', body, o),
    deleteWebhook: () => call<Envelope & Json>({ method: 'DELETE', path: '/api/sandbox/webhooks' }),
    testWebhook: (o?: PostOptions) => post<Envelope & Json>('/api/sandbox/webhooks/test', {}, o),
    retryWebhooks: (body: WebhookRetryInput, o?: PostOptions) => post<Envelope & Json>('/api/sandbox/webhooks/retry', body, o),
  }
}

/** A client made by createSandboxClient. */
export type SandboxClient = ReturnType<typeof createSandboxClient>
