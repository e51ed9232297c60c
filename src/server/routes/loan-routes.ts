import { applyDirectAction } from '../../domain/direct-actions.js'
import { createLoanDirect } from '../../domain/create-loan.js'
import { applyLoanFlowStep } from '../../domain/loan-flow.js'
import { stampAfterBook, viewLoanState, type LoanStateView } from '../../domain/loan-book.js'
import { applyRepaymentStep } from '../../domain/repayment-flow.js'
import type { DomainContext, DomainResult, LoanBook } from '../../domain/types.js'
import { createLoanSchema } from '../../schemas/create-loan.js'
import { loanActionSchema } from '../../schemas/loan-action.js'
import { loanFlowSchema } from '../../schemas/loan-flow.js'
import { parseBody } from '../../schemas/parse-body.js'
import { repaymentFlowSchema } from '../../schemas/repayment-flow.js'
import type { RouteContext, RouteSpec, WriteRoute } from '../route-types.js'
import { createDomainContext } from '../services.js'
import type { SessionDoc } from '../session-doc.js'
import { viewPartner } from './partner-routes.js'
import { encloseParts, joinAnswerParts, partLoanStateFields, stringifyLoanState, stringifyLoanStateFields } from '../loan-state-json.js'
import { stringifyOnce } from '../../storage/json-memo.js'
import type { z } from 'zod'

/** Commits a domain step into the session document: new book, its events appended in order. */
function applyResult(doc: SessionDoc, result: DomainResult): SessionDoc {
  return {
    ...doc,
    book: result.book,
    outbox: result.events.length ? [...doc.outbox, ...result.events] : doc.outbox,
    event_seq: doc.event_seq + result.events.length,
  }
}

/** A POST route that validates with `schema`, runs one domain step and answers the loan state. */
function loanWrite<S extends z.ZodType>(schema: S, step: (book: LoanBook, input: z.infer<S>, ctx: DomainContext, params: Record<string, string>) => DomainResult): WriteRoute {
  return {
    kind: 'write',
    parse: (body) => parseBody(schema, body),
    execute(doc, input, ctx: RouteContext) {
      const domain = createDomainContext(ctx.services, ctx.principal)
      const result = step(doc.book, input as z.infer<S>, { ...domain, now: stampAfterBook(doc.book, domain.now) }, ctx.params)
      const next = applyResult(doc, result)
      const view = viewLoanState(next.book)
      // Stored for replays as parts; the text sent now is made from the same parts.
      const parts = partLoanStateFields(view, next.book)
      return { doc: next, body: view as unknown as Record<string, unknown>, bodyFields: joinAnswerParts(parts, next.book), parts: encloseParts(parts) }
    },
  }
}

/** The loan endpoints of spec part 4, as [method, path, route]. */
export function createLoanRoutes(): Array<[string, string, RouteSpec]> {
  return [
    ['GET', '/api/sandbox/config', { kind: 'read', session: false, fixed: true, read: (_doc, ctx) => ctx.services.config as unknown as Record<string, unknown> }],
    ['GET', '/api/sandbox/loans', {
      kind: 'read',
      session: true,
      read: (doc) => viewLoanState(doc!.book) as unknown as Record<string, unknown>,
      stringifyFields: (body) => stringifyLoanStateFields(body as unknown as LoanStateView),
    }],
    ['GET', '/api/sandbox/state', {
      kind: 'read',
      session: true,
      read: (doc, ctx) => ({ loans: viewLoanState(doc!.book), partner: viewPartner(doc!, ctx.services, ctx.principal.keyId) }),
      stringifyFields: (body) => `"loans":${stringifyLoanState(body.loans as LoanStateView)},"partner":${stringifyOnce(body.partner as object)}`,
    }],
    ['POST', '/api/sandbox/loans', loanWrite(createLoanSchema, (book, input, ctx) => createLoanDirect(book, input, ctx))],
    ['POST', '/api/sandbox/loans/flow', loanWrite(loanFlowSchema, (book, input, ctx) => applyLoanFlowStep(book, input, ctx))],
    ['POST', '/api/sandbox/loans/:id/action', loanWrite(loanActionSchema, (book, input, ctx, params) => applyDirectAction(book, params.id!, input, ctx))],
    ['POST', '/api/sandbox/loans/:id/repayment-flow', loanWrite(repaymentFlowSchema, (book, input, ctx, params) => applyRepaymentStep(book, params.id!, input, ctx))],
  ]
}
