import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
})

describe('a path whose percent-encoding does not decode', () => {
  it('is a 400 INVALID_REQUEST that says what is wrong with the path, not a bare "Bad Request"', async () => {
    api = await createTestApi()
    for (const path of ['/api/sandbox/loans/%E0%A4%A/action', '/api/sandbox/loans/%ff/action', '/api/sandbox/loans/loan_%zz/repayment-flow']) {
      const answer = await api.post(path, { action: 'repay_interest', amount: 1 })
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({
        error_code: 'INVALID_REQUEST',
        error: 'The path is not valid percent-encoding: each % must start a %XX escape of two hex digits, and the bytes they make must be UTF-8.',
        details: { field: 'path', issue: 'malformed percent-encoding' },
      })
    }
  })
})
