export { verifyReceiver, ReceiverUnreachableError, type VerifyReport, type VerifyCaseResult, type VerifyReceiverOptions } from './verify-receiver.js'
export { buildVerifyBattery, type VerifyCase, type SignedDelivery } from './verify-battery.js'
export { buildSampleEvents } from './sample-events.js'
export { startWebhookListener, type ReceivedWebhook, type WebhookListenerOptions } from './webhook-listener.js'
