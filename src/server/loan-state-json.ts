import type { LoanStateView } from '../domain/loan-book.js'
import { isFinalApplication, isFinalLoan, isFinalOperation } from '../domain/final-records.js'
import type { Loan, LoanBook } from '../domain/types.js'
import { stringifyOnce } from '../storage/json-memo.js'

/** A list of the loan book that a stored answer can point into. */
export type BookList = 'loans' | 'applications' | 'repayments'
/** The records `book[list][from..to]`, all final, standing for their JSON texts joined by commas. */
export type RecordRun = [list: BookList, from: number, to: number]
/** The first `count` entries of the history of `book.loans[loan]`, which only grows at its end. */
export type HistoryRun = [list: 'history', loan: number, count: number]
/**
 * A loan-state answer as it is stored for replays: its JSON text, except that runs of final
 * records (closed loans, completed applications, finished repayments) and the long histories of
 * active loans are kept as positions in the key's book. Every answer holds the key's whole
 * history, so storing the text of each one for 24 hours grew with the square of the key's loans
 * (400 loans: 0.8 GB stored, measured) or of a loan's actions; what final-records.ts keeps from
 * changing gives back the same text from its position.
 */
export type AnswerParts = Array<string | RecordRun | HistoryRun>

/** Shorter histories are stored as text: splitting a loan's JSON costs more than it saves. */
const HISTORY_RUN_MIN = 16

/** The JSON text of `loan` before and after the entries of its history (same key order as JSON.stringify). */
function splitAtHistory(loan: Loan): [string, string] {
  const before: Record<string, unknown> = {}
  const after: Record<string, unknown> = {}
  let seen = false
  for (const [key, value] of Object.entries(loan)) {
    if (key === 'history') seen = true
    else (seen ? after : before)[key] = value
  }
  const head = JSON.stringify(before)
  const tail = JSON.stringify(after)
  return [`${head === '{}' ? '{' : `${head.slice(0, -1)},`}"history":[`, `]${tail === '{}' ? '}' : `,${tail.slice(1)}`}`]
}

const IS_FINAL: { [L in BookList]: (record: LoanBook[L][number]) => boolean } = {
  loans: isFinalLoan as (record: object) => boolean,
  applications: isFinalApplication as (record: object) => boolean,
  repayments: isFinalOperation as (record: object) => boolean,
}

/**
 * Builds the parts of a loan-state answer's members (its JSON text without the outer braces);
 * `book` is the book the view was made from, or null for text only (a single part). Literal text
 * is concatenated, not joined, as in stringifyListOnce.
 */
function buildParts(view: LoanStateView, book: LoanBook | null): AnswerParts {
  const parts: AnswerParts = []
  let text = ''
  const flush = () => {
    if (text !== '') parts.push(text)
    text = ''
  }
  const writeList = (items: readonly object[], list: BookList) => {
    text += '['
    const records = book?.[list] as readonly object[] | undefined
    let at = 0
    let run: RecordRun | null = null
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (records) while (at < records.length && records[at] !== item) at++
      const found = records !== undefined && at < records.length
      const final = found && IS_FINAL[list](item as never)
      if (final && run && run[2] === at - 1) {
        run[2] = at
        continue
      }
      if (i > 0) text += ','
      run = null
      if (final) {
        flush()
        parts.push((run = [list, at, at]))
      } else if (found && list === 'loans' && (item as Loan).history.length >= HISTORY_RUN_MIN) {
        const [head, tail] = splitAtHistory(item as Loan)
        text += head
        flush()
        parts.push(['history', at, (item as Loan).history.length])
        text += tail
      } else {
        text += stringifyOnce(item)
      }
    }
    text += ']'
  }
  const { wallet, activeLoans, loanHistory, draft, sandboxFlow } = view
  text += `"wallet":${JSON.stringify(wallet)},"activeLoans":`
  writeList(activeLoans, 'loans')
  text += ',"loanHistory":'
  writeList(loanHistory, 'loans')
  text += `,"draft":${draft === null ? 'null' : stringifyOnce(draft)},"sandboxFlow":{"loanApplications":`
  writeList(sandboxFlow.loanApplications, 'applications')
  text += ',"repaymentOperations":'
  writeList(sandboxFlow.repaymentOperations, 'repayments')
  text += '}'
  flush()
  return parts
}

/** Parts of an object's members made into parts of the object: its braces added to the end parts. */
export function encloseParts(parts: AnswerParts): AnswerParts {
  const enclosed = [...parts]
  if (typeof enclosed[0] === 'string') enclosed[0] = `{${enclosed[0]}`
  else enclosed.unshift('{')
  const last = enclosed.length - 1
  if (typeof enclosed[last] === 'string') enclosed[last] = `${enclosed[last]}}`
  else enclosed.push('}')
  return enclosed
}

/**
 * The JSON text of a loan state answer, equal to JSON.stringify of it. Every loan, application
 * and repayment in it is an object of the key's book, whose text the session's saves make anyway
 * (stringifyOnce), so an answer costs the number of its objects rather than their size: a key with
 * 60 loans otherwise re-serializes ~60 KB on every POST and GET.
 */
export function stringifyLoanState(view: LoanStateView): string {
  return `{${stringifyLoanStateFields(view)}}`
}

/**
 * The members of a loan state answer's JSON text, for an envelope to wrap: taking them out of the
 * whole text (slice) would copy it, hundreds of KB for a key with a long history.
 */
export function stringifyLoanStateFields(view: LoanStateView): string {
  // Without a book there are no runs: one text part.
  return buildParts(view, null)[0] as string
}

/** The parts of the members of the answer `view` (made from `book`): runs of its final records, and text. */
export function partLoanStateFields(view: LoanStateView, book: LoanBook): AnswerParts {
  return buildParts(view, book)
}

/** The parts to store for the answer `view` (made from `book`): its whole JSON text, in parts. */
export function partLoanState(view: LoanStateView, book: LoanBook): AnswerParts {
  return encloseParts(buildParts(view, book))
}

/**
 * The JSON text of stored answer parts, read against the key's book as it is now. Throws if a run
 * no longer points at final records, which only a book changed behind the server's back can do.
 */
export function joinAnswerParts(parts: AnswerParts, book: LoanBook): string {
  let text = ''
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part
      continue
    }
    if (part[0] === 'history') {
      const [, loan, count] = part
      const history = book.loans[loan]?.history
      if (!history || history.length < count) throw new Error(`stored answer refers to ${count} history entries of loans[${loan}], which has fewer`)
      for (let at = 0; at < count; at++) text += (at === 0 ? '' : ',') + stringifyOnce(history[at]!)
      continue
    }
    const [list, from, to] = part
    const records = book[list] as readonly object[] | undefined
    for (let at = from; at <= to; at++) {
      const record = records?.[at]
      if (!record || !IS_FINAL[list](record as never)) throw new Error(`stored answer refers to ${list}[${at}], which is not a final record of the book`)
      text += (at === from ? '' : ',') + stringifyOnce(record)
    }
  }
  return text
}

/** Whether stored parts hold any run: if not, the answer is plain text, stored as such. */
export function hasRecordRuns(parts: AnswerParts): boolean {
  return parts.some((part) => typeof part !== 'string')
}
