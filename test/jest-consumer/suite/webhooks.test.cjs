const { signWebhook, constructWebhookEvent, WebhookVerificationError } = require('partner-sandbox/webhooks')

const secret = 'whsec_jest_consumer_0001'
const body = JSON.stringify({ id: 'evt_jest_1', type: 'sandbox.loan.issued', created_at: '2026-01-01T00:00:00.000Z', data: { object: { id: 'loan_1' } } })
const { headers } = signWebhook({ secret, body, eventId: 'evt_jest_1', eventType: 'sandbox.loan.issued' })

test('a signed delivery parses into its event', () => {
  expect(constructWebhookEvent({ secret, body: Buffer.from(body), headers })).toMatchObject({ id: 'evt_jest_1', type: 'sandbox.loan.issued' })
})

test('another secret is a WebhookVerificationError the test can catch by class', () => {
  let error
  try {
    constructWebhookEvent({ secret: 'whsec_someone_else_0001', body, headers })
  } catch (caught) {
    error = caught
  }
  expect(error).toBeInstanceOf(WebhookVerificationError)
  expect(error.code).toBe('signature_mismatch')
})
