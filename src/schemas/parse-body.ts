import type { z } from 'zod'
import type { ErrorCode } from '../errors/codes.js'
import { SandboxError } from '../errors/sandbox-error.js'
import { isJsonObject } from '../json-text/is-json-object.js'
import { findClosestMatch } from '../text/closest-match.js'
import { hintMisspeltField } from './misspelt-field.js'

/**
 * Fields whose errors are 400 INVALID_AMOUNT (spec part 7: "amount, collateral or repayment
 * parameters invalid"); the repayment kind fields count as repayment parameters.
 */
const AMOUNT_FIELDS: ReadonlySet<string> = new Set(['collateral_btc', 'loan_amount', 'amount', 'repayment_kind', 'full_repayment'])

/** One failed field, as reported in `details`. */
export interface FieldIssue {
  field: string
  issue: string
}

/**
 * Validates a JSON request body against `schema` and returns the parsed value (unknown fields
 * dropped). No body (`undefined`) is an empty object; a JSON `null` is a body that is not one.
 * Throws SandboxError: 400 INVALID_REQUEST when the body is not an object, 400
 * INVALID_ACTION for a missing or unknown `action`, 400 INVALID_AMOUNT for an amount field, and
 * 400 INVALID_REQUEST for any other field; `details` names the first failed field and, when
 * several failed, lists them all in `issues`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const value = body === undefined ? {} : body
  if (!isJsonObject(value)) {
    throw new SandboxError('INVALID_REQUEST', 'Request body must be a JSON object.', { field: 'body', issue: 'must be a JSON object' })
  }
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issues = result.error.issues.map((issue) => describeIssue(issue, value as Record<string, unknown>))
  const code = pickErrorCode(issues)
  // Report the field that decided the code first, so `field` always explains `error_code`.
  const ordered = [...issues.filter((i) => codeOf(i.field) === code), ...issues.filter((i) => codeOf(i.field) !== code)]
  const first = ordered[0]!
  const details: Record<string, unknown> = { field: first.field, issue: first.issue }
  if (code === 'INVALID_ACTION') {
    const allowed = allowedValues(result.error.issues, 'action')
    if (allowed) details.allowed = allowed
  }
  if (ordered.length > 1) details.issues = ordered
  const error = new SandboxError(code, `${first.field} ${first.issue}.${suggestValue(result.error.issues, first.field, value)}`, details)
  throw hintMisspeltField(error, findUnknownFields(schema, value))
}

/** The top-level fields of `body` that `schema` (an object schema) does not have. */
function findUnknownFields(schema: z.ZodType, body: Record<string, unknown>): string[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape
  return shape === undefined ? [] : Object.keys(body).filter((field) => !Object.hasOwn(shape, field))
}

/** ` Got "start_colateral_transfer": did you mean start_collateral_transfer?` for a value one typo from an allowed one. */
function suggestValue(issues: readonly z.core.$ZodIssue[], field: string, body: Record<string, unknown>): string {
  const issue = issues.find((i) => i.code === 'invalid_value' && i.path.length === 1 && i.path[0] === field)
  const sent = body[field]
  if (issue?.code !== 'invalid_value' || typeof sent !== 'string') return ''
  const match = findClosestMatch(sent, issue.values.map(String))
  return match === undefined ? '' : ` Got ${JSON.stringify(sent)}: did you mean ${match}?`
}

/**
 * The top-level fields of a request body that its schema dropped (parseBody keeps only the fields
 * it knows): a misspelt optional field (`nmae` for `name`) would otherwise be a 200 that changed
 * nothing, with no word of why. Empty when either side is not a plain object.
 */
export function findIgnoredFields(body: unknown, parsed: unknown): string[] {
  if (!isJsonObject(body) || !isJsonObject(parsed)) return []
  return Object.keys(body).filter((field) => !Object.hasOwn(parsed, field))
}

/** The error code a failure of `field` maps to. */
function codeOf(field: string): ErrorCode {
  if (field === 'action') return 'INVALID_ACTION'
  return AMOUNT_FIELDS.has(field) ? 'INVALID_AMOUNT' : 'INVALID_REQUEST'
}

/** The action decides what the rest of the body means, so its error wins, then amounts. */
function pickErrorCode(issues: FieldIssue[]): ErrorCode {
  const codes = new Set(issues.map((i) => codeOf(i.field)))
  if (codes.has('INVALID_ACTION')) return 'INVALID_ACTION'
  if (codes.has('INVALID_AMOUNT')) return 'INVALID_AMOUNT'
  return 'INVALID_REQUEST'
}

/** Turns a zod issue into `{ field, issue }` with a short, client-readable text. */
function describeIssue(issue: z.core.$ZodIssue, body: Record<string, unknown>): FieldIssue {
  const field = issue.path.length ? issue.path.map(String).join('.') : 'body'
  const topKey = issue.path[0]
  if (typeof topKey === 'string' && body[topKey] === undefined) return { field, issue: 'is required' }
  return { field, issue: describeProblem(issue) }
}

/** The text of one issue, without zod's "Invalid input:" phrasing. */
function describeProblem(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int' ? 'must be an integer' : `must be a ${issue.expected === 'number' ? 'finite number' : issue.expected}`
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? 'must not be empty' : `must have at least ${issue.minimum} characters`
      if (issue.origin === 'array') return Number(issue.minimum) === 1 ? 'must not be empty' : `must have at least ${issue.minimum} items`
      return issue.inclusive ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`
    case 'too_big':
      if (issue.origin === 'string') return `must have at most ${issue.maximum} characters`
      if (issue.origin === 'array') return `must have at most ${issue.maximum} items`
      return issue.inclusive ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`
    default:
      return issue.message
  }
}

/** The allowed values of an enum field, taken from its issue. */
function allowedValues(issues: readonly z.core.$ZodIssue[], field: string): string[] | undefined {
  const issue = issues.find((i) => i.path[0] === field && i.code === 'invalid_value')
  return issue?.code === 'invalid_value' ? issue.values.map(String) : undefined
}
