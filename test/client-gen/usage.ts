// Type-checked against the client generated from dist/openapi.json (see test/e2e/openapi-client.test.ts).
import createClient from 'openapi-fetch'
import type { paths, components, webhooks } from './generated/api.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:4010', headers: { authorization: 'Bearer sk_sandbox_example_key_0000' } })

export async function walkLoan(): Promise<string> {
  const started = await client.POST('/api/sandbox/loans/flow', {
    params: { header: { 'Idempotency-Key': 'k1' } },
    body: { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000 },
  })
  if (started.error) {
    const code: components['schemas']['Error']['error_code'] = started.error.error_code
    return code
  }
  const draft: components['schemas']['LoanApplication'] | null = started.data.draft
  const replayed: boolean = started.data.idempotency_replayed
  const action = await client.POST('/api/sandbox/loans/{loanId}/action', {
    params: { path: { loanId: 'loan_1' }, header: { 'Idempotency-Key': 'k2' } },
    body: { action: 'repay_interest', amount: 10 },
  })
  const debt: number | undefined = action.data?.activeLoans[0]?.debt
  const config = await client.GET('/api/sandbox/config')
  const btcUsd: number | undefined = config.data?.rates.btc_usd
  const hooks = await client.GET('/api/sandbox/webhooks')
  const status: 'pending' | 'delivered' | 'retrying' | 'failed' | undefined = hooks.data?.deliveries[0]?.status
  return `${draft?.status} ${replayed} ${debt} ${btcUsd} ${status}`
}

/** A receiver's handler: each webhook's body types its `data.object` as the object that event carries. */
type EventBody<T extends keyof webhooks> = NonNullable<webhooks[T]['post']>['requestBody']['content']['application/json']

export function describeEvents(issued: EventBody<'sandbox.loan.issued'>, test: EventBody<'sandbox.webhook.test'>, partner: EventBody<'sandbox.partner.updated'>): string {
  const type: 'sandbox.loan.issued' = issued.type
  const loan: components['schemas']['Loan'] = issued.data.object
  const debt: number = issued.data.object.debt
  const endpoint: string = test.data.object.endpoint_id
  const partnerId: string = partner.data.object.id
  return `${type} ${loan.id} ${debt} ${endpoint} ${partnerId}`
}
