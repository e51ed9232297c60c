import { createEvent } from '../../domain/events.js'
import { applyPartnerUpdate, viewPartner as buildPartnerView, type PartnerProfile } from '../../domain/partner.js'
import { parseBody } from '../../schemas/parse-body.js'
import { partnerProfileSchema, type PartnerProfileInput } from '../../schemas/partner.js'
import type { RouteContext, RouteSpec } from '../route-types.js'
import { createDomainContext, type SandboxServices } from '../services.js'
import type { SessionDoc } from '../session-doc.js'
import { stringifyOnce } from '../../storage/json-memo.js'

/**
 * The partner block last built for each loan book, with what else it was built from. The block
 * walks every loan's history, so a client polling GET state or GET partner rebuilt it at each
 * request (0.34 ms at 100 loans); books and profiles are immutable values, so it holds until
 * either changes.
 */
const builtViews = new WeakMap<object, { partner: unknown; fixtures: unknown; keySeed: string; view: Record<string, unknown> }>()

/** The partner block: GET /partner and the `partner` part of GET state are this same object. */
export function viewPartner(doc: SessionDoc, services: SandboxServices, keySeed: string): Record<string, unknown> {
  const built = builtViews.get(doc.book)
  if (built && built.partner === doc.partner && built.fixtures === services.fixtures && built.keySeed === keySeed) return built.view
  const view = buildPartnerView({
    profile: doc.partner as PartnerProfile | null,
    defaults: services.fixtures.partnerProfile,
    levels: services.fixtures.partnerLevels,
    book: doc.book,
    keySeed,
  }) as unknown as Record<string, unknown>
  builtViews.set(doc.book, { partner: doc.partner, fixtures: services.fixtures, keySeed, view })
  return view
}

function savePartner(doc: SessionDoc, input: unknown, ctx: RouteContext) {
  const domain = createDomainContext(ctx.services, ctx.principal)
  const { profile } = applyPartnerUpdate(doc.partner as PartnerProfile | null, input as PartnerProfileInput, domain.now, domain.keySeed)
  const event = createEvent(domain, 'sandbox.partner.updated', profile)
  const next: SessionDoc = { ...doc, partner: profile as unknown as Record<string, unknown>, outbox: [...doc.outbox, event], event_seq: doc.event_seq + 1 }
  return { doc: next, body: viewPartner(next, ctx.services, domain.keySeed) }
}

/** The partner endpoints of spec 4.8, as [method, path, route]. */
export function createPartnerRoutes(): Array<[string, string, RouteSpec]> {
  return [
    ['GET', '/api/sandbox/partner', {
      kind: 'read',
      session: true,
      read: (doc, ctx) => viewPartner(doc!, ctx.services, ctx.principal.keyId),
      // The block's text is made once too: the object's fields without its braces.
      stringifyFields: (body) => stringifyOnce(body).slice(1, -1),
    }],
    ['POST', '/api/sandbox/partner', {
      kind: 'write',
      parse: (body) => parseBody(partnerProfileSchema, body),
      execute: (doc, input, ctx) => savePartner(doc, input, ctx),
    }],
  ]
}
