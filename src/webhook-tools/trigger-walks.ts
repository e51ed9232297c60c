import { randomBytes } from 'node:crypto'
import { describeInjectedPage, SandboxApiError } from '../client/api-error.js'
import { buildLoanPath, type SandboxClient, type LoanAnswer, type PartnerAnswer } from '../client/sandbox-client.js'
import type { ClientAnswer, ClientRequest } from '../client/request-types.js'
import { computeMinCollateral } from '../domain/loan-math.js'
import type { EventType, SandboxConfig } from '../domain/types.js'

/** One request a trigger sent, with the events the API sends for it (spec 3.1-3.3, 6.2). */
export interface TriggerRequest {
  method: ClientRequest['method']
  path: string
  /** The flow step or direct action, for POSTs that carry one. */
  action: string | null
  status: number
  request_id: string | null
  /**
   * True when the answer is the one stored for an earlier attempt (the client sent the request
   * again after losing its answer): its `request_id` is the retry's, not that of the request whose
   * change queued the events.
   */
  replayed: boolean
  /** What the spec says this request sends, in order (none for reads and refusals). */
  events: EventType[]
}

/** The API refused a request of the walk: the request, and the answer's error (its message names the step). */
export class TriggerRefusedError extends SandboxApiError {
  override name = 'TriggerRefusedError'
  constructor(readonly request: TriggerRequest, answer: ClientAnswer) {
    super(answer.status, answer.errorCode, answer.requestId, answer.body ?? answer.text, request.method, request.action ? `${request.path} (${request.action})` : request.path, answer.headers.get('location'), describeInjectedPage(answer))
  }
}

/** `--loan` names no active loan of the key. */
export class TriggerLoanNotFoundError extends Error {
  constructor(readonly loanId: string) {
    super(`this key has no active loan ${loanId} (GET /api/sandbox/loans lists them)`)
    this.name = 'TriggerLoanNotFoundError'
  }
}

interface Walk {
  client: SandboxClient
  loanId: string | undefined
  requests: TriggerRequest[]
  onRequest: ((request: TriggerRequest) => void) | undefined
  config?: SandboxConfig
}

async function send(walk: Walk, request: ClientRequest, events: EventType[]): Promise<ClientAnswer> {
  const answer = await walk.client.request(request)
  const ok = answer.status >= 200 && answer.status < 300
  const action = (request.body as { action?: unknown } | undefined)?.action
  const sent: TriggerRequest = {
    method: request.method,
    path: request.path,
    action: typeof action === 'string' ? action : null,
    status: answer.status,
    request_id: answer.requestId,
    replayed: (answer.body as { idempotency_replayed?: unknown } | null)?.idempotency_replayed === true,
    events: ok ? events : [],
  }
  walk.requests.push(sent)
  walk.onRequest?.(sent)
  if (!ok) throw new TriggerRefusedError(sent, answer)
  return answer
}

const post = (path: string, body: Record<string, unknown>): ClientRequest => ({ method: 'POST', path, body })
const get = (path: string): ClientRequest => ({ method: 'GET', path })
const txHash = () => randomBytes(32).toString('hex')

/** Up to 8 decimals (satoshis), rounded up so an LTV bound stays met. */
const ceilBtc = (value: number) => Math.ceil(value * 1e8 - 1e-6) / 1e8
/** Down to whole satoshis, so a wallet bound stays met. */
const floorBtc = (value: number) => Math.floor(value * 1e8 + 1e-6) / 1e8

/**
 * The smallest loan the config allows, with twice the collateral its LTV limit needs: cheap on
 * the key's simulated wallet, and far from every limit whatever the server's config. Less than
 * twice when the wallet (`walletBtc`, less `reserveBtc` kept for a later step) holds less, down
 * to what the LTV limit needs; below that the server's refusal says what is short.
 */
export function chooseSmallLoan(config: SandboxConfig, walletBtc = Number.POSITIVE_INFINITY, reserveBtc = 0): { collateral_btc: number; loan_amount: number; loan_currency: string } {
  const loanAmount = config.limits.loan_amount.min
  const needed = loanAmount / config.rates.btc_usd / (config.risk.max_ltv_percent / 100)
  const { min, max } = config.limits.collateral_btc
  // Exact, as the server judges it: a float ceiling can come out one satoshi short.
  const least = Math.max(min, computeMinCollateral(loanAmount, config))
  const most = Math.min(max, floorBtc(walletBtc - reserveBtc))
  // USDT, the API's default, unless the config lists other currencies only.
  const currency = config.currencies.includes('USDT') ? 'USDT' : config.currencies[0]!
  return { loan_amount: loanAmount, collateral_btc: Math.max(least, Math.min(most, ceilBtc(needed * 2))), loan_currency: currency }
}

async function readConfig(walk: Walk): Promise<SandboxConfig> {
  walk.config ??= (await send(walk, get('/api/sandbox/config'), [])).body as SandboxConfig
  return walk.config
}

/** A loan for a new loan or application: sized by the config, and by the wallet the key has left. */
async function chooseLoanFor(walk: Walk, reserveBtc = 0): Promise<ReturnType<typeof chooseSmallLoan>> {
  const config = await readConfig(walk)
  const { wallet } = (await send(walk, get('/api/sandbox/loans'), [])).body as LoanAnswer
  return chooseSmallLoan(config, wallet.BTC, reserveBtc)
}

/** The loan `--loan` names (its debt read from the loan state), or a new small one. */
async function findOrOpenLoan(walk: Walk, reserveBtc = 0): Promise<{ id: string; debt: number }> {
  if (walk.loanId !== undefined) {
    const state = (await send(walk, get('/api/sandbox/loans'), [])).body as LoanAnswer
    const loan = state.activeLoans.find((item) => item.id === walk.loanId)
    if (!loan) throw new TriggerLoanNotFoundError(walk.loanId)
    return loan
  }
  const answer = await send(walk, post('/api/sandbox/loans', await chooseLoanFor(walk, reserveBtc)), ['sandbox.loan.issued'])
  return (answer.body as LoanAnswer).activeLoans.at(-1)!
}

async function walkLoanFlow(walk: Walk): Promise<void> {
  const path = '/api/sandbox/loans/flow'
  const started = await send(walk, post(path, { action: 'start_collateral_transfer', ...(await chooseLoanFor(walk)) }), ['sandbox.loan_application.updated'])
  const draft = (started.body as LoanAnswer).draft!
  const confirmations = draft.wallets.collateralDeposit.requiredConfirmations
  await send(walk, post(path, { action: 'confirm_btc', application_id: draft.id, tx_hash: txHash(), confirmations }), ['sandbox.loan_application.updated'])
  await send(walk, post(path, { action: 'run_kyt', application_id: draft.id }), ['sandbox.loan_application.updated'])
  await send(walk, post(path, { action: 'complete_payout', application_id: draft.id }), ['sandbox.loan.issued'])
}

async function walkInterestRepayment(walk: Walk): Promise<void> {
  const loan = await findOrOpenLoan(walk)
  const path = buildLoanPath(loan.id, 'repayment-flow')
  const started = await send(walk, post(path, { action: 'start_payment', repayment_kind: 'interest' }), ['sandbox.repayment.updated'])
  const operation = (started.body as LoanAnswer).sandboxFlow.repaymentOperations.findLast((item) => item.loan_id === loan.id)!
  const ids = { operation_id: operation.operation_id }
  const confirmations = operation.wallets.repayment.requiredConfirmations
  await send(walk, post(path, { action: 'confirm_usdt', ...ids, tx_hash: txHash(), confirmations }), ['sandbox.repayment.updated'])
  await send(walk, post(path, { action: 'run_kyt', ...ids }), ['sandbox.repayment.updated'])
  await send(walk, post(path, { action: 'complete_settlement', ...ids }), ['sandbox.repayment.settled'])
}

async function walkAddCollateral(walk: Walk): Promise<void> {
  // The config first: a new loan leaves the wallet enough for the collateral added after it.
  const { min } = (await readConfig(walk)).limits.collateral_btc
  const loan = await findOrOpenLoan(walk, min)
  await send(walk, post(buildLoanPath(loan.id, 'action'), { action: 'add_collateral', amount: min }), ['sandbox.loan.updated'])
}

async function walkRepayAll(walk: Walk): Promise<void> {
  const loan = await findOrOpenLoan(walk)
  await send(walk, post(buildLoanPath(loan.id, 'action'), { action: 'repay_principal', amount: loan.debt }), ['sandbox.loan.updated', 'sandbox.collateral.returned'])
}

async function walkPartnerUpdate(walk: Walk): Promise<void> {
  // The profile's own name sent back: the event, with no field changed.
  const { profile } = (await send(walk, get('/api/sandbox/partner'), [])).body as PartnerAnswer
  await send(walk, post('/api/sandbox/partner', { name: profile.name }), ['sandbox.partner.updated'])
}

async function walkTestEvent(walk: Walk): Promise<void> {
  await send(walk, post('/api/sandbox/webhooks/test', {}), ['sandbox.webhook.test'])
}

/**
 * For each event type, the shortest walk through the API that makes the server send it, leaving
 * no open application or repayment behind (the key's next flow must not meet a 409).
 */
const WALKS: Record<EventType, (walk: Walk) => Promise<void>> = {
  'sandbox.loan_application.updated': walkLoanFlow,
  'sandbox.loan.issued': async (walk) => void await findOrOpenLoan(walk),
  'sandbox.loan.updated': walkAddCollateral,
  'sandbox.repayment.updated': walkInterestRepayment,
  'sandbox.repayment.settled': walkInterestRepayment,
  'sandbox.collateral.returned': walkRepayAll,
  'sandbox.partner.updated': walkPartnerUpdate,
  'sandbox.webhook.test': walkTestEvent,
}

/** Event types whose walk acts on a loan: the ones `loanId` applies to. */
export const LOAN_EVENTS: readonly EventType[] = ['sandbox.loan.updated', 'sandbox.repayment.updated', 'sandbox.repayment.settled', 'sandbox.collateral.returned']

/** Sends the requests that make the server send `event`; resolves with them, in order. */
export async function walkToEvent(
  client: SandboxClient,
  event: EventType,
  options: { loanId?: string | undefined; onRequest?: ((request: TriggerRequest) => void) | undefined } = {},
): Promise<TriggerRequest[]> {
  const walk: Walk = { client, loanId: options.loanId, requests: [], onRequest: options.onRequest }
  await WALKS[event](walk)
  return walk.requests
}
