const { createSandboxClient, SandboxApiError } = require('partner-sandbox/client')

const client = createSandboxClient({ baseUrl: process.env.SANDBOX_BASE_URL, apiKey: 'sk_sandbox_jest_consumer_0001' })

test('walks the 4-step loan flow to an active loan', async () => {
  const { draft } = await client.loanFlow({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000 })
  await client.loanFlow({ action: 'confirm_btc', tx_hash: 'tx-jest-1', confirmations: 2 })
  await client.loanFlow({ action: 'run_kyt' })
  const { activeLoans } = await client.loanFlow({ action: 'complete_payout' })
  expect(activeLoans.find((loan) => loan.application_id === draft.id)).toMatchObject({ status: 'active' })
})

test('a step out of order is a SandboxApiError the test can catch by class', async () => {
  const error = await client.loanFlow({ action: 'run_kyt' }).catch((caught) => caught)
  expect(error).toBeInstanceOf(SandboxApiError)
  expect(error.status).toBe(409)
  expect(error.errorCode).toBe('FLOW_CONFLICT')
})
