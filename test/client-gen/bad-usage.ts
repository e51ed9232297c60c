// Must NOT type-check: proves the generated types are precise, not `any`.
import createClient from 'openapi-fetch'
import type { paths, webhooks } from './generated/api.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:4010' })
const answer = await client.GET('/api/sandbox/loans')
export const typo: number | undefined = answer.data?.activeLoans[0]?.debtt
export const wrongBody = client.POST('/api/sandbox/loans/flow', { params: { header: { 'Idempotency-Key': 'k' } }, body: { action: 'fly_to_the_moon' } })
declare const issued: NonNullable<webhooks['sandbox.loan.issued']['post']>['requestBody']['content']['application/json']
// A loan.issued event carries the loan, not the application.
export const wrongObject: number = issued.data.object.collateral_btc
