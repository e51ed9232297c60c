import { hashToHex } from '../domain/address-hash.js'
import type { DomainContext, EventType, SandboxEvent } from '../domain/types.js'
import { loadFixtures } from '../server/fixtures.js'
import { walkSampleEvents } from '../webhook-tools/sample-events.js'

const EXAMPLE_TIME = '2026-11-22T12:00:00.000Z'

/**
 * One event of every type as `serve` delivers it, for the document's examples: made by the domain
 * itself (walkSampleEvents), so an example cannot drift from the real shape. Ids and time are
 * fixed, so the document is the same on every build; of several events of a type, the last one is
 * kept.
 */
export function buildEventExamples(): Map<EventType, SandboxEvent> {
  const fixtures = loadFixtures()
  let count = 0
  const ctx: DomainContext = {
    now: EXAMPLE_TIME,
    newId: (prefix) => `${prefix}_${hashToHex(`openapi-example:${prefix}:${++count}`, 24)}`,
    keySeed: 'openapi-example',
    config: fixtures.config,
    requiredConfirmations: fixtures.wallet.required_confirmations,
  }
  const events = walkSampleEvents(ctx, { balances: fixtures.wallet.balances, partner: { name: 'Acme Lending', email: 'dev@acme.example' } })
  return new Map(events.map((event) => [event.type, event]))
}
