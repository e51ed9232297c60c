import { describe, expect, it } from 'vitest'
import { SandboxApiError, SandboxConnectionError } from '../../src/client/api-error.js'
import { CliError } from '../../src/cli/cli-error.js'
import { toTriggerCliError } from '../../src/cli/trigger-lines.js'

const conflict = (error: string, reason: string, path = '/api/sandbox/loans') =>
  new SandboxApiError(409, 'FLOW_CONFLICT', 'req_1', { error, error_code: 'FLOW_CONFLICT', details: { reason } }, 'POST', path)

const messageOf = (error: SandboxApiError, local: boolean) => {
  const cli = toTriggerCliError(error, { baseUrl: 'http://127.0.0.1:4010', proxy: undefined, local })
  expect(cli).toBeInstanceOf(CliError)
  expect(cli).toMatchObject({ exitCode: 1, code: 'REFUSED' })
  return (cli as CliError).message
}

describe('toTriggerCliError on a 409 FLOW_CONFLICT', () => {
  it('a wallet too low: names --loan, and a fresh state the key can have (no keys reset for the local default key)', () => {
    const wallet = conflict('The simulator wallet holds 0 BTC; 1 BTC is needed.', 'INSUFFICIENT_BALANCE')
    expect(messageOf(wallet, true)).toBe('POST /api/sandbox/loans answered 409 FLOW_CONFLICT: The simulator wallet holds 0 BTC; 1 BTC is needed; '
      + "the key's simulated wallet is too low: for the loan and repayment events, act on an active loan with --loan ID (GET /api/sandbox/loans lists them); "
      + 'or start from a fresh state: another key (--api-key sk_sandbox_ and 16 or more letters, digits or _: any key works here)')
    expect(messageOf(wallet, false)).toMatch(/; or start from a fresh state: sandbox keys reset KEY for a registered key, or another key$/)
  })

  it('an application left open: where to see it, what to do', () => {
    const draft = conflict('Application app_1 is still open; finish it before starting another.', 'DRAFT_ALREADY_OPEN', '/api/sandbox/loans/flow (start_collateral_transfer)')
    expect(messageOf(draft, false)).toBe('POST /api/sandbox/loans/flow (start_collateral_transfer) answered 409 FLOW_CONFLICT: Application app_1 is still open; finish it before starting another; '
      + "the key's state is in the way (an application or repayment it left open: GET /api/sandbox/loans shows it): finish it, or start from a fresh state: sandbox keys reset KEY for a registered key, or another key")
  })

  it('a repayment left open: the same pointer to what is open', () => {
    const repayment = conflict('Repayment rop_1 is still open.', 'OPERATION_IN_PROGRESS', '/api/sandbox/loans/loan_1/repayment-flow (start_payment)')
    expect(messageOf(repayment, false)).toMatch(/; the key's state is in the way \(an application or repayment it left open: GET \/api\/sandbox\/loans shows it\): finish it/)
  })
})

describe('toTriggerCliError for the test event of a key without an endpoint', () => {
  it('is setup (exit 2) with the --json code NO_RECEIVER the README lists, and says where the test event goes', () => {
    const missing = new SandboxApiError(409, 'WEBHOOK_ENDPOINT_REQUIRED', 'req_1', { error: 'This key has no webhook endpoint.' }, 'POST', '/api/sandbox/webhooks/test')
    const cli = toTriggerCliError(missing, { baseUrl: 'http://127.0.0.1:4010', proxy: undefined, local: true })
    expect(cli).toMatchObject({ exitCode: 2, code: 'NO_RECEIVER' })
    expect((cli as CliError).message).toMatch(/ \(the test event goes only to the key's endpoint; serve's --webhook-forward-to URL gets every other event type\)$/)
  })
})

describe('toTriggerCliError on a server it cannot reach', () => {
  it('through a proxy: asks about the proxy and names the NO_PROXY that bypasses it, as run does', () => {
    const refused = new SandboxConnectionError('http://10.0.0.5:4010/api/sandbox/webhooks', 4, { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
    const cli = toTriggerCliError(refused, { baseUrl: 'http://10.0.0.5:4010', proxy: 'http://127.0.0.1:3128', local: false })
    expect(cli).toMatchObject({ exitCode: 2, code: 'UNREACHABLE' })
    expect((cli as CliError).message).toMatch(/; the requests went through the proxy http:\/\/127\.0\.0\.1:3128: is it up, and can it reach the server\? \(NO_PROXY=10\.0\.0\.5 to connect directly\)$/)
  })

  it('a key the server does not take: the default local key gets the advice after the API\'s sentence, without ".:"', () => {
    const refused = new SandboxApiError(401, 'SANDBOX_API_KEY_INVALID', 'req_1', { error: 'The API key is not registered on this sandbox.' }, 'GET', '/api/sandbox/webhooks')
    const cli = toTriggerCliError(refused, { baseUrl: 'http://127.0.0.1:4010', proxy: undefined, local: true })
    expect(cli).toMatchObject({ exitCode: 2, code: 'KEY_REFUSED', message: 'the server refused the key: GET /api/sandbox/webhooks answered 401 SANDBOX_API_KEY_INVALID: The API key is not registered on this sandbox: this server takes registered keys only, give one with --api-key (sandbox keys list)' })
  })
})
