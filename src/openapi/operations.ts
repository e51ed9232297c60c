import type { z } from 'zod'
import type { ErrorCode } from '../errors/codes.js'
import { createLoanSchema } from '../schemas/create-loan.js'
import { loanActionSchema } from '../schemas/loan-action.js'
import { loanFlowSchema } from '../schemas/loan-flow.js'
import { partnerProfileSchema } from '../schemas/partner.js'
import { repaymentFlowSchema } from '../schemas/repayment-flow.js'
import * as answers from '../schemas/responses/answers.js'
import { emptyBodySchema, webhookEndpointSchema, webhookRetrySchema } from '../schemas/webhooks.js'

/** One operation of the API as the document describes it. */
export interface Operation {
  method: 'get' | 'post' | 'delete'
  path: string
  operationId: string
  tag: 'Config and state' | 'Loans' | 'Partner' | 'Webhooks'
  summary: string
  description: string
  /** `optional`: whether the body may be left out, where `{}` passing the schema does not say it (the default). */
  request?: { id: string; schema: z.ZodType; example?: unknown; optional?: boolean }
  /** The 200 answer. */
  answer: z.ZodType
  /** Error codes this operation itself can answer, beyond the ones every call can. */
  errors: ErrorCode[]
  /** False for the spec's read endpoints. */
  idempotent: boolean
}

const LOAN_BODY = { collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }
const loanIdParam = '{loanId}'

/** Every operation of `/api/sandbox`, in the spec's order. */
export const OPERATIONS: Operation[] = [
  { method: 'get', path: '/api/sandbox/config', operationId: 'getConfig', tag: 'Config and state', summary: 'Sandbox configuration', description: 'Rates, borrow rate, risk limits, terms, fees, limits and currencies the sandbox calculates with (fixtures/config.json, or serve --config).', answer: answers.configAnswerSchema, errors: [], idempotent: false },
  { method: 'get', path: '/api/sandbox/state', operationId: 'getState', tag: 'Config and state', summary: 'The whole state of the key', description: 'The loan state and the partner block. The recovery rule after a 409: read this and continue from the current step.', answer: answers.stateAnswerSchema, errors: [], idempotent: false },
  { method: 'get', path: '/api/sandbox/loans', operationId: 'listLoans', tag: 'Loans', summary: 'The loan state', description: 'Wallet, active loans, loan history, the open draft and the flows.', answer: answers.loanStateAnswerSchema, errors: [], idempotent: false },
  { method: 'post', path: '/api/sandbox/loans', operationId: 'createLoan', tag: 'Loans', summary: 'Create a loan directly', description: 'Creates an active loan without the step flow: collateral is taken from the wallet, the payout minus the origination fee is credited. A retry with the same Idempotency-Key never creates a second loan.', request: { id: 'CreateLoanRequest', schema: createLoanSchema, example: LOAN_BODY }, answer: answers.loanWriteAnswerSchema, errors: ['INVALID_REQUEST', 'INVALID_AMOUNT', 'FLOW_CONFLICT'], idempotent: true },
  { method: 'post', path: '/api/sandbox/loans/flow', operationId: 'loanFlow', tag: 'Loans', summary: 'One step of the 4-step loan flow', description: 'start_collateral_transfer → confirm_btc → run_kyt → complete_payout. An unknown application_id is 404 LOAN_NOT_FOUND; a known one that is not the open draft is 409 FLOW_CONFLICT. A step out of order is 409 FLOW_CONFLICT (details.reason) and changes nothing. The body is optional in the schema (spec 4.3); without one, the answer is 400 INVALID_ACTION.', request: { id: 'LoanFlowRequest', schema: loanFlowSchema, example: { action: 'start_collateral_transfer', ...LOAN_BODY }, optional: true }, answer: answers.loanWriteAnswerSchema, errors: ['INVALID_REQUEST', 'INVALID_ACTION', 'INVALID_AMOUNT', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'], idempotent: true },
  { method: 'post', path: `/api/sandbox/loans/${loanIdParam}/action`, operationId: 'loanAction', tag: 'Loans', summary: 'A direct action on a loan', description: 'repay_interest, repay_principal, add_collateral, remove_collateral or increase_loan. Repaying the whole principal closes the loan and returns the collateral. A change that would leave LTV above max_ltv_percent is 409 with reason LTV_LIMIT.', request: { id: 'LoanActionRequest', schema: loanActionSchema, example: { action: 'repay_interest', amount: 50 } }, answer: answers.loanWriteAnswerSchema, errors: ['INVALID_REQUEST', 'INVALID_ACTION', 'INVALID_AMOUNT', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'], idempotent: true },
  { method: 'post', path: `/api/sandbox/loans/${loanIdParam}/repayment-flow`, operationId: 'repaymentFlow', tag: 'Loans', summary: 'One step of the 5-step repayment flow', description: 'start_payment → confirm_usdt → run_kyt → complete_settlement → complete_collateral_return (full_principal only). Kinds: interest, partial_principal (amount below the debt), full_principal (debt plus interest due).', request: { id: 'RepaymentFlowRequest', schema: repaymentFlowSchema, example: { action: 'start_payment', repayment_kind: 'interest' } }, answer: answers.loanWriteAnswerSchema, errors: ['INVALID_REQUEST', 'INVALID_ACTION', 'INVALID_AMOUNT', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'], idempotent: true },
  { method: 'get', path: '/api/sandbox/partner', operationId: 'getPartner', tag: 'Partner', summary: 'Partner profile, links, levels and rewards', description: 'Until POST /partner the profile is the fixture default with the key\'s referral code.', answer: answers.partnerAnswerSchema, errors: [], idempotent: false },
  { method: 'post', path: '/api/sandbox/partner', operationId: 'updatePartner', tag: 'Partner', summary: 'Create or update the partner profile', description: 'Emits sandbox.partner.updated.', request: { id: 'PartnerProfileRequest', schema: partnerProfileSchema, example: { name: 'Acme Lending', email: 'dev@acme.example' }, optional: false }, answer: answers.partnerWriteAnswerSchema, errors: ['INVALID_REQUEST'], idempotent: true },
  { method: 'get', path: '/api/sandbox/webhooks', operationId: 'getWebhook', tag: 'Webhooks', summary: 'The endpoint and the delivery log', description: 'Never shows the signing secret, only secretPreview.', answer: answers.webhookAnswerSchema, errors: [], idempotent: false },
  { method: 'post', path: '/api/sandbox/webhooks', operationId: 'setWebhook', tag: 'Webhooks', summary: 'Register or update the endpoint', description: 'One endpoint per key. signingSecret is returned in full only on first create and with rotate_secret: true. URL rule: https only, no credentials, no local, private or reserved address in any notation or after DNS (serve --allow-local-webhooks relaxes it for development).', request: { id: 'WebhookEndpointRequest', schema: webhookEndpointSchema, example: { url: 'https://partner.example.com/webhooks' }, optional: false }, answer: answers.webhookWriteAnswerSchema, errors: ['INVALID_REQUEST', 'WEBHOOK_URL_REQUIRED', 'WEBHOOK_URL_INVALID', 'WEBHOOK_EVENTS_INVALID'], idempotent: true },
  { method: 'delete', path: '/api/sandbox/webhooks', operationId: 'deleteWebhook', tag: 'Webhooks', summary: 'Disable the endpoint', description: 'Sets enabled: false and keeps the delivery log. Without an endpoint: 409 WEBHOOK_ENDPOINT_REQUIRED. Takes no Idempotency-Key (sandbox: the spec requires one on POST only, and disabling twice is disabling once): one sent is ignored, neither stored nor compared with the keys of POSTs.', answer: answers.webhookAnswerSchema, errors: ['WEBHOOK_ENDPOINT_REQUIRED'], idempotent: false },
  { method: 'post', path: '/api/sandbox/webhooks/test', operationId: 'testWebhook', tag: 'Webhooks', summary: 'Send a test event', description: 'Creates and signs sandbox.webhook.test and hands it to the sender at once, whatever the endpoint\'s events list (sandbox: it checks the receiver, not the subscription, and the answer does not wait for the receiver); it shows the delivery, pending, whose outcome appears in GET /webhooks. A disabled or missing endpoint is 409 WEBHOOK_ENDPOINT_REQUIRED.', request: { id: 'EmptyRequest', schema: emptyBodySchema, example: {} }, answer: answers.webhookTestAnswerSchema, errors: ['WEBHOOK_ENDPOINT_REQUIRED'], idempotent: true },
  { method: 'post', path: '/api/sandbox/webhooks/retry', operationId: 'retryWebhooks', tag: 'Webhooks', summary: 'Retry failed deliveries', description: '{ delivery_id } for one, { delivery_ids } for at most 50 (delivery_id counted when both are sent), {} for every failed one (at most 50, the oldest first; call it again for the next 50). Each goes back in its queue with a fresh schedule; its attempts go on counting. An unknown or delivered id is 404 WEBHOOK_DELIVERY_NOT_FOUND and retries nothing.', request: { id: 'WebhookRetryRequest', schema: webhookRetrySchema, example: { delivery_id: 'whd_...' } }, answer: answers.webhookRetryAnswerSchema, errors: ['INVALID_REQUEST', 'WEBHOOK_DELIVERY_NOT_FOUND'], idempotent: true },
]
