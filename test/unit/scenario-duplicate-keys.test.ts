import { describe, expect, it } from 'vitest'
import { findDuplicateKeys } from '../../src/scenarios/find-duplicate-keys.js'
import { loadScenarios, parseScenario, SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/load-scenarios.js'
import { problemsOf } from '../helpers/scenario-problems.js'

/** The duplicates of a text as `path @ lines`, checked first to be JSON that parses. */
function duplicatesOf(text: string): string[] {
  JSON.parse(text)
  return findDuplicateKeys(text).map(({ path, lines }) => `${path.join('/')} @ ${lines.join(',')}`)
}

const LOST = 'JSON keeps only the last one, so the first would be ignored'
const GET = '{ "method": "GET", "path": "/api/sandbox/config" }'

// Written as a person would, one key per line, so the lines reported can be checked.
const WITH_DUPLICATES = `{
  "name": "n",
  "description": "d",
  "steps": [
    { "request": ${GET} },
    {
      "request": ${GET},
      "expect": {
        "status": 200,
        "body": {
          "activeLoans.0.status": "active",
          "activeLoans.0.status": "closed"
        },
        "status": 404
      }
    }
  ],
  "name": "n2"
}
`

describe('duplicate keys in a scenario file', () => {
  it('are refused with the file, the step, the field and the lines, in the order written', () => {
    expect(problemsOf(WITH_DUPLICATES)).toEqual([
      `2 expect.body.activeLoans.0.status: duplicate key "activeLoans.0.status" (lines 11 and 12): ${LOST}`,
      `2 expect.status: duplicate key "status" (lines 9 and 14): ${LOST}`,
      `- name: duplicate key "name" (lines 2 and 18): ${LOST}`,
    ])
  })

  it('are reported along with the schema\'s problems, all at once', () => {
    const text = `{ "name": "n", "description": "d", "steps": [{ "request": { "method": "PUT", "path": "/x" }, "expect": { "status": 200, "status": 201 } }] }`
    expect(problemsOf(text)).toEqual([
      `1 expect.status: duplicate key "status" (line 1): ${LOST}`,
      '1 request.method: Invalid option: expected one of "GET"|"POST"|"DELETE"',
    ])
  })

  it('say so when a key is written more than twice', () => {
    const text = `{ "name": "n", "description": "d",\n"steps": [{ "request": ${GET} }], "tags": [], "tags": [],\n"tags": [] }`
    expect(problemsOf(text)).toEqual(['- tags: duplicate key "tags" (lines 2 and 3): JSON keeps only the last one, so the earlier ones would be ignored'])
  })

  it('leave a valid file alone, and no shipped scenario has any', async () => {
    const text = `{ "name": "n", "description": "d", "steps": [{ "request": ${GET}, "expect": { "body": { "a": "a", "b": { "a": 1 } } } }, { "request": ${GET} }] }`
    expect(parseScenario('scenarios/ok.json', text).steps).toHaveLength(2)
    expect((await loadScenarios(SHIPPED_SCENARIOS_DIR)).length).toBeGreaterThan(0)
  })
})

describe('findDuplicateKeys', () => {
  it('finds them at the top level, in nested objects and in objects inside arrays', () => {
    expect(duplicatesOf('{"a":1,"a":2}')).toEqual(['a @ 1,1'])
    expect(duplicatesOf('{"x":{"y":{"z":1,"z":[]}}}')).toEqual(['x/y/z @ 1,1'])
    expect(duplicatesOf('{"list":[{"a":1},{"b":1,"b":2}],"deep":[[0,{"c":{},"c":{}}]]}')).toEqual(['list/1/b @ 1,1', 'deep/0/1/c @ 1,1'])
    expect(duplicatesOf('[{"a":1,"a":1}]')).toEqual(['0/a @ 1,1'])
  })

  it('compares keys as JSON decodes them', () => {
    expect(duplicatesOf('{"a":1,"\\u0061":2}')).toEqual(['a @ 1,1'])
    expect(duplicatesOf('{"a\\"b":1,"a\\u0022b":2}')).toEqual(['a"b @ 1,1'])
    expect(duplicatesOf('{"\\\\":1,"\\u005c":2,"\\/":3,"/":4}')).toEqual(['\\ @ 1,1', '/ @ 1,1'])
    expect(duplicatesOf('{"é":1,"\\u00e9":2,"😀":3,"\\ud83d\\ude00":4}')).toEqual(['é @ 1,1', '😀 @ 1,1'])
    // Alike but not the same: case, an escaped quote that ends no string, a trailing space.
    expect(duplicatesOf('{"a":1,"A":2,"a\\"":3,"a ":4,"\\\\a":5}')).toEqual([])
  })

  it('finds none for the same key in sibling objects, or a key equal to a value', () => {
    expect(duplicatesOf('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":1}]}')).toEqual([])
    expect(duplicatesOf('{"k":"k","v":["k","k"],"w":{"x":"k"},"k2":"{\\"k\\":1,\\"k\\":2}"}')).toEqual([])
    expect(duplicatesOf('{"k":{"k":{"k":1}}}')).toEqual([])
    expect(duplicatesOf('{"a":"}","a2":"]","a3":",","a4":":"}')).toEqual([])
    expect(duplicatesOf('[1, true, null, "x", -2.5e3, {}, []]')).toEqual([])
    expect(duplicatesOf('"just a string"')).toEqual([])
  })

  it('keeps looking after a closed object, in the object that held it', () => {
    expect(duplicatesOf('{"a":{"b":1,"c":{"d":[1,{"e":2}]}},"a":0}')).toEqual(['a @ 1,1'])
    expect(duplicatesOf('{"a":[],"b":[{},{}],"b":{}}')).toEqual(['b @ 1,1'])
  })

  it('counts lines across whitespace and CRLF', () => {
    expect(duplicatesOf('{\r\n  "a": 1,\r\n\r\n  "a": 2\r\n}')).toEqual(['a @ 2,4'])
    expect(duplicatesOf('{"s": "a\\nb",\n"s": 1}')).toEqual(['s @ 1,2'])
  })

  it('takes time linear in the text', () => {
    const wide = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":${i}`).join(',')},"k7":0}`
    const deep = `${'['.repeat(200_000)}{"a":1,"a":2}${']'.repeat(200_000)}`
    const started = performance.now()
    expect(findDuplicateKeys(wide).map((d) => d.key)).toEqual(['k7'])
    expect(findDuplicateKeys(deep)[0]).toMatchObject({ key: 'a', lines: [1, 1] })
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
