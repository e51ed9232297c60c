import { describe, expect, it } from 'vitest'
import { problemsOf } from '../helpers/scenario-problems.js'

const valid = { name: 'n', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }
const problemsOfStep = (step: unknown) => problemsOf(JSON.stringify({ ...valid, steps: [...valid.steps, step] }))
const get = { method: 'GET', path: '/x' }

describe('a step written as two kinds at once', () => {
  it('names both kinds and says a step is one of them, rather than calling the second an unknown key', () => {
    expect(problemsOfStep({ request: get, replay: true })).toEqual([
      '2 -: a step is one of request, replay, wait_for_webhook, recover, and this one has request and replay: split it into one step each',
    ])
    expect(problemsOfStep({ replay: true, wait_for_webhook: { type: 'sandbox.loan.issued' }, recover: { flow: 'loan' } })).toEqual([
      '2 -: a step is one of request, replay, wait_for_webhook, recover, and this one has replay, wait_for_webhook and recover: split it into one step each',
    ])
  })

  it('still reports a genuinely unknown key beside one kind as before', () => {
    expect(problemsOfStep({ request: get, foo: 1 })).toEqual(['2 -: Unrecognized key: "foo"'])
  })
})
