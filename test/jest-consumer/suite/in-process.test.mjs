import { createSandbox, listenSandbox, createSandboxClient } from 'partner-sandbox'

let sandbox
let listener

beforeAll(async () => {
  sandbox = await createSandbox()
  listener = await listenSandbox(sandbox)
})
afterAll(async () => {
  await listener.close()
  await sandbox.close()
})

test('a test file starts a sandbox of its own and creates a loan on it', async () => {
  const client = createSandboxClient({ baseUrl: listener.url, apiKey: 'sk_sandbox_jest_esm_consumer_01' })
  const { activeLoans } = await client.createLoan({ collateral_btc: 0.5, loan_amount: 20000 })
  expect(activeLoans).toHaveLength(1)
  const answer = await sandbox.fetch(new Request(`${listener.url}/api/sandbox/loans`, { headers: { authorization: 'Bearer sk_sandbox_jest_esm_consumer_01' } }))
  expect((await answer.json()).activeLoans).toEqual(activeLoans)
})
