/**
 * The webhook events a walk expects per key, against those the forward receiver got. A sequential
 * step's events must come in order; a batch sent concurrently may commit in any order, so its
 * events are matched as a set.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Expected events of one key: single types in order, and concurrent batches as groups. */
export type ExpectedEvents = Array<string | string[]>

const LOAN_FLOW_EVENTS: Record<string, string> = {
  start_collateral_transfer: 'sandbox.loan_application.updated',
  confirm_btc: 'sandbox.loan_application.updated',
  run_kyt: 'sandbox.loan_application.updated',
  complete_payout: 'sandbox.loan.issued',
}
const REPAYMENT_EVENTS: Record<string, string> = {
  start_payment: 'sandbox.repayment.updated',
  confirm_usdt: 'sandbox.repayment.updated',
  run_kyt: 'sandbox.repayment.updated',
  complete_settlement: 'sandbox.repayment.settled',
  complete_collateral_return: 'sandbox.collateral.returned',
}

/** The event types a freshly executed 200 of `path` with `body` emits (`closed`: the loan it changed is now closed). */
export function eventsOf(path: string, body: any, closed: boolean): string[] {
  if (path === '/api/sandbox/loans') return ['sandbox.loan.issued']
  if (path === '/api/sandbox/loans/flow') return [LOAN_FLOW_EVENTS[body.action]!]
  if (path === '/api/sandbox/partner') return ['sandbox.partner.updated']
  if (path === '/api/sandbox/webhooks/test') return ['sandbox.webhook.test']
  if (path.endsWith('/repayment-flow')) return [REPAYMENT_EVENTS[body.action]!]
  if (path.endsWith('/action')) {
    const returned = body.action === 'remove_collateral' || (body.action === 'repay_principal' && closed)
    return returned ? ['sandbox.loan.updated', 'sandbox.collateral.returned'] : ['sandbox.loan.updated']
  }
  return []
}

/** The id an event's object is known by: the key that owns that id sent the event. */
export function objectIdOf(event: any): string | undefined {
  const object = event?.data?.object
  return object?.operation_id ?? object?.endpoint_id ?? object?.id
}

/** Problems of the events one key received (`got`, in arrival order) against `expected`. */
export function compareEvents(label: string, expected: ExpectedEvents, got: string[]): string[] {
  let at = 0
  for (const item of expected) {
    const group = Array.isArray(item) ? [...item].sort() : [item]
    const slice = got.slice(at, at + group.length)
    const sorted = Array.isArray(item) ? [...slice].sort() : slice
    if (sorted.join() !== group.join()) {
      return [`${label}: events differ at ${at}: expected ${group.join('+')}, got ${slice.join('+') || 'nothing'} (expected ${expected.flat().length} in all, got ${got.length}: ${got.slice(Math.max(0, at - 3), at + 5).join(', ')})`]
    }
    at += group.length
  }
  return at === got.length ? [] : [`${label}: ${got.length - at} unexpected events after the expected ${at}: ${got.slice(at, at + 5).join(', ')}`]
}
