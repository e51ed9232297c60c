import { describe, expect, it } from 'vitest'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'

const flow = (body: Record<string, unknown>) => ({ method: 'POST', path: '/api/sandbox/loans/flow', body })

describe('a variable whose capturing step a recover step jumped over', () => {
  it('is named as skipped by the recovery, not as never captured by an earlier step', async () => {
    // On a fresh key no draft is open: recover continues at the start (step 3), past step 2.
    const file = parseScenario('skipped-capture.json', JSON.stringify({
      name: 'n', description: 'd',
      steps: [
        { recover: { flow: 'loan' } },
        { name: 'leftover: confirm', request: flow({ action: 'confirm_btc', tx_hash: 'tx_{{$run}}', confirmations: 6 }), capture: { appId: 'draft.id' } },
        { name: 'start', request: flow({ action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 200 }) },
        { name: 'check the draft', request: { method: 'GET', path: '/api/sandbox/state' }, expect: { body: { 'loans.draft.id': '{{appId}}' } } },
      ],
    }))
    const report = await runScenarios([file])
    expect(report.scenarios[0]).toMatchObject({
      status: 'failed',
      error: 'step 4 (check the draft): {{appId}} has no value: step 2 (leftover: confirm), which captures it, was skipped when step 1 (recover the loan flow from GET state) continued at step 3; capture it in a step that runs either way',
    })
  })
})
