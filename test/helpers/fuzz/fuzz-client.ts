import { buildRequest } from '../api.js'
import { checkAnswerAgainstContract } from '../contract.js'
import { ErrorCodes } from '../../../src/errors/codes.js'
import type { Sandbox } from '../../../src/server/sandbox-types.js'

/** One request of a walk, as printed when the walk fails. */
export interface SentRequest {
  n: number
  key: number
  method: string
  path: string
  idem?: string | null
  raw?: string
}

/** What the fuzzer sees of an answer. */
export interface FuzzAnswer {
  status: number
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  headers: Headers
}

/** Sends requests to a sandbox in-process, logs them, and collects the problems of each answer. */
export class FuzzClient {
  readonly sent: SentRequest[] = []
  readonly problems: string[] = []
  /** Answers per status and outcome, for the walk's figures. */
  readonly counts: Record<string, number> = {}
  sandbox!: Sandbox
  /** Set: requests go over HTTP to this loopback base URL (Node's request path) instead of in-process. */
  baseUrl: string | undefined

  constructor(readonly keys: string[]) {}

  private idemCount = 0

  /** A fresh Idempotency-Key; a counter, so a rerun of a seed sends the same keys. */
  newIdem(): string {
    return `fz-${this.idemCount++}`
  }

  async send(key: number, method: string, path: string, options: { raw?: string; idem?: string | null } = {}): Promise<FuzzAnswer> {
    const entry: SentRequest = { n: this.sent.length, key, method, path, ...(method === 'POST' && { idem: options.idem ?? null }), ...(options.raw !== undefined && { raw: options.raw }) }
    this.sent.push(entry)
    const request = buildRequest(this.baseUrl ?? 'http://sandbox.test', method, path, { key: this.keys[key], rawBody: options.raw, idempotencyKey: options.idem ?? null }, this.keys[key]!)
    const response = this.baseUrl ? await fetch(request) : await this.sandbox.fetch(request)
    const text = await response.text()
    const answer: FuzzAnswer = { status: response.status, text, body: undefined, headers: response.headers }
    const tally = `${method} ${response.status}${response.headers.get('idempotent-replayed') ? ' replay' : ''}`
    this.counts[tally] = (this.counts[tally] ?? 0) + 1
    const where = `#${entry.n} k${key} ${method} ${path} -> ${response.status}`
    try {
      answer.body = JSON.parse(text)
    } catch {
      this.problems.push(`${where}: body is not JSON: ${text.slice(0, 200)}`)
      return answer
    }
    if (response.status >= 500) this.problems.push(`${where}: server error ${text.slice(0, 300)}`)
    if (response.status >= 400) {
      const code = answer.body?.error_code as keyof typeof ErrorCodes
      if (!(code in ErrorCodes)) this.problems.push(`${where}: unknown error_code ${code}`)
      else if (ErrorCodes[code] !== response.status) this.problems.push(`${where}: ${code} with status ${response.status}, codes.ts says ${ErrorCodes[code]}`)
    }
    for (const problem of checkAnswerAgainstContract(method, request.url, response.status, response.headers, text)) this.problems.push(`${where}: contract: ${problem}`)
    return answer
  }

  /** Records a problem found by a walk check, naming the request it follows. */
  fail(message: string): void {
    this.problems.push(`after #${this.sent.length - 1}: ${message}`)
  }

  /** The request sequence, one line each, for a failure report. */
  formatSent(limit = 400): string {
    const shown = this.sent.slice(-limit)
    return shown.map((r) => `#${r.n} k${r.key} ${r.method} ${r.path}${r.idem ? ` idem=${r.idem}` : ''}${r.raw !== undefined ? ` ${r.raw.length > 300 ? `${r.raw.slice(0, 300)}…(${r.raw.length})` : r.raw}` : ''}`).join('\n')
  }
}
