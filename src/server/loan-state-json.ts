import type { LoanStateView } from '../domain/loan-book.js'
import { isFinalApplication, isFinalLoan, isFinalOperation } from '../domain/final-records.js'
import type { LoanBook } from '../domain/types.js'
import { stringifyOnce } from '../storage/json-memo.js'

/** A list of the loan book that a stored answer can point into. */
export type BookList = 'loans' | 'applications' | 'repayments'
/** The records `book[list][from..to]`, all final, standing for their JSON texts joined by commas. */
export type RecordRun = [list: BookList, from: number, to: number]
/**
 * A loan-state answer as it is stored for replays: its JSON text, except that runs of final
 * records (closed loans, completed applications, finished repayments) are kept as positions in
 * the key's book. Every answer holds the key's whole history, so storing the text of each one
 * for 24 hours grew with the square of the key's loans (400 loans: 0.8 GB stored, measured);
 * final records never change and never move, so their positions give back the same text.
 */
export type AnswerParts = Array<string | RecordRun>

const IS_FINAL: { [L in BookList]: (record: LoanBook[L][number]) => boolean } = {
  loans: isFinalLoan as (record: object) => boolean,
  applications: isFinalApplication as (record: object) => boolean,
  repayments: isFinalOperation as (record: object) => boolean,
}

/**
 * Builds the parts of a loan-state answer; `book` is the book the view was made from, or null
 * for text only (a single part). Literal text is concatenated, not joined, as in stringifyListOnce.
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
      const final = records !== undefined && at < records.length && IS_FINAL[list](item as never)
      if (final && run && run[2] === at - 1) {
        run[2] = at
        continue
      }
      if (i > 0) text += ','
      if (final) {
        flush()
        parts.push((run = [list, at, at]))
      } else {
        run = null
        text += stringifyOnce(item)
      }
    }
    text += ']'
  }
  const { wallet, activeLoans, loanHistory, draft, sandboxFlow } = view
  text += `{"wallet":${JSON.stringify(wallet)},"activeLoans":`
  writeList(activeLoans, 'loans')
  text += ',"loanHistory":'
  writeList(loanHistory, 'loans')
  text += `,"draft":${draft === null ? 'null' : stringifyOnce(draft)},"sandboxFlow":{"loanApplications":`
  writeList(sandboxFlow.loanApplications, 'applications')
  text += ',"repaymentOperations":'
  writeList(sandboxFlow.repaymentOperations, 'repayments')
  text += '}}'
  flush()
  return parts
}

/**
 * The JSON text of a loan state answer, equal to JSON.stringify of it. Every loan, application
 * and repayment in it is an object of the key's book, whose text the session's saves make anyway
 * (stringifyOnce), so an answer costs the number of its objects rather than their size: a key with
 * 60 loans otherwise re-serializes ~60 KB on every POST and GET.
 */
export function stringifyLoanState(view: LoanStateView): string {
  // Without a book there are no runs: one text part.
  return buildParts(view, null)[0] as string
}

/** The parts to store for the answer `view` (made from `book`): runs of its final records, and text. */
export function partLoanState(view: LoanStateView, book: LoanBook): AnswerParts {
  return buildParts(view, book)
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
