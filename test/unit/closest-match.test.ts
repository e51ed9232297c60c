import { describe, expect, it } from 'vitest'
import { findClosestMatch } from '../../src/text/closest-match.js'
import { selectScenarios } from '../../src/scenarios/select-scenarios.js'
import { parseStorageKind } from '../../src/storage/create-storage.js'
import { readEventName } from '../../src/cli/event-names.js'

describe('the value a typo meant', () => {
  it('finds the candidate within an edit for every 3 characters (1 to 3), a swap of neighbours counting as one', () => {
    const ids = ['loan-flow', 'repay-full', 'repay-interest', 'webhook-test-event']
    expect(findClosestMatch('loan_flow', ids)).toBe('loan-flow')
    expect(findClosestMatch('repay-fulll', ids)).toBe('repay-full')
    expect(findClosestMatch('repay-intrest', ids)).toBe('repay-interest')
    expect(findClosestMatch('memroy', ['fs', 'memory'])).toBe('memory')
    expect(findClosestMatch('Loan-Flow', ids)).toBe('loan-flow')
    // A short word's one edit may be a swap, and case is no edit at all.
    expect(findClosestMatch('laon', ['loan'])).toBe('loan')
    expect(findClosestMatch('MEMROY', ['fs', 'memory'])).toBe('memory')
    // The nearest wins over a farther one; among equals, the first.
    expect(findClosestMatch('repay-fulll', ['repay-fu', 'repay-full'])).toBe('repay-full')
    expect(findClosestMatch('repay-ful', ['repay-fuel', 'repay-full'])).toBe('repay-fuel')
  })

  it('suggests nothing for a word unlike every candidate, or for the candidate itself', () => {
    expect(findClosestMatch('nosuch', ['loan-flow', 'smoke', 'webhooks'])).toBeUndefined()
    // Four edits is too many, however long the words.
    expect(findClosestMatch('webhook-test-evnt-xyz', ['webhook-test-event'])).toBeUndefined()
    expect(findClosestMatch('webhook-test-evnt-xy', ['webhook-test-event'])).toBeUndefined()
    // Four or five characters: still one edit (two would make `tags` a typo of `tape`).
    expect(findClosestMatch('tags', ['tape'])).toBeUndefined()
    expect(findClosestMatch('stats', ['state'])).toBe('state')
    expect(findClosestMatch('stats', ['steps'])).toBeUndefined()
    // Short words: one edit at most (`foo` is not `flow`, nor `status` `tags`).
    expect(findClosestMatch('x', ['fs'])).toBeUndefined()
    expect(findClosestMatch('ab', ['fs'])).toBeUndefined()
    expect(findClosestMatch('foo', ['flow'])).toBeUndefined()
    expect(findClosestMatch('status', ['tags'])).toBeUndefined()
    expect(findClosestMatch('stauts', ['tags', 'status'])).toBe('status')
    expect(findClosestMatch('f', ['fs'])).toBe('fs')
    expect(findClosestMatch('fs', ['fs'])).toBeUndefined()
    expect(findClosestMatch('anything', [])).toBeUndefined()
    // Far longer than every candidate: none (the length difference alone rules it out).
    expect(findClosestMatch(`loan-flow${'x'.repeat(1_000_000)}`, ['loan-flow'])).toBeUndefined()
    expect(findClosestMatch('loan-flowxxx', ['loan-flow'])).toBe('loan-flow')
  })

  it('is named in the messages for an unknown scenario, storage and event', () => {
    const scenario = (id: string) => ({ id, tags: [], name: id, description: id, file: `${id}.json`, steps: [] })
    const all = ['loan-flow', 'repay-full'].map(scenario)
    expect(() => selectScenarios(all, ['loan_flow'])).toThrow('unknown scenario loan_flow (did you mean loan-flow?); known: loan-flow, repay-full')
    expect(() => selectScenarios(all, ['loan_flow', 'nosuch', 'repay-fulll'])).toThrow('unknown scenarios loan_flow (did you mean loan-flow?), nosuch, repay-fulll (did you mean repay-full?); known: ')
    expect(() => parseStorageKind('memroy')).toThrow('unknown storage "memroy" (did you mean memory?): use fs, memory or a redis:// URL')
    // Short for memory, and the scheme alone for a redis URL.
    expect(() => parseStorageKind('mem')).toThrow('unknown storage "mem" (did you mean memory?): use fs, memory or a redis:// URL')
    expect(() => parseStorageKind('me')).toThrow('unknown storage "me": use fs, memory or a redis:// URL')
    expect(() => parseStorageKind('Redis')).toThrow("--storage redis needs the server's URL: redis://HOST:PORT/DB, e.g. redis://127.0.0.1:6379/0")
    // A URL-like value is not matched (nor echoed with its password).
    expect(() => parseStorageKind('redsi://:pw@127.0.0.1')).toThrow(/^unknown storage "redsi:\/\/\*\*\*@127\.0\.0\.1": use/)
    expect(() => readEventName('loan.isued')).toThrow('unknown event "loan.isued" (did you mean sandbox.loan.issued?): one of ')
    expect(() => readEventName('sandbox.loan.exploded')).toThrow(/^unknown event "sandbox\.loan\.exploded": one of /)
  })
})
