import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { XMLParser } from 'fast-xml-parser'
import { describe, expect, it } from 'vitest'
import { findJsonErrorOffset } from '../../src/json-text/find-json-error.js'
import { formatProblem, loadScenarioFile, loadScenarios, parseScenario, ScenarioFileError, SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/load-scenarios.js'
import { problemsOf } from '../helpers/scenario-problems.js'
import { formatJunitReport } from '../../src/scenarios/junit-report.js'
import type { RunReport } from '../../src/scenarios/report-types.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const valid = { name: 'n', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }
const scenarioDir = useTempDirs('sandbox-scenario-files')

describe('scenario files', () => {
  it('every shipped scenario is valid, and the ones the issue asks for are there', async () => {
    const scenarios = await loadScenarios(SHIPPED_SCENARIOS_DIR)
    expect(scenarios).toHaveLength(readdirSync(SHIPPED_SCENARIOS_DIR).filter((name) => name.endsWith('.json')).length)
    expect(scenarios.map((s) => s.id)).toEqual(expect.arrayContaining([
      'loan-flow', 'direct-loan', 'repay-interest', 'repay-partial-principal', 'repay-full', 'direct-actions',
      'out-of-order-recovery', 'dropped-connection-retry', 'idempotency-key-conflict', 'key-isolation',
      'ltv-and-balance-limits', 'webhook-test-event', 'webhook-loan-events', 'partner-profile',
      'partner-deals-and-rewards', 'request-errors', 'webhook-endpoint-rules', 'webhook-events-rules',
    ]))
    for (const scenario of scenarios) expect(scenario.file.endsWith(`${scenario.id}.json`)).toBe(true)
    expect(scenarios.filter((s) => s.tags.includes('local-only')).map((s) => s.id).sort())
      .toEqual(['key-isolation', 'ltv-and-balance-limits', 'partner-deals-and-rewards', 'webhook-events-rules', 'webhook-loan-events', 'webhook-test-event'])
  })

  it('reports a JSON syntax error with the file', () => {
    expect(problemsOf('{ "name": ')[0]).toMatch(/^- -: not valid JSON/)
  })

  it('says on which line and column a JSON syntax error is, and what to remove for a trailing comma', () => {
    const lines = ['{', '  "name": "n",', '  "description": "d",', '  "steps": [', '    { "request": { "method": "GET", "path": "/x" } }']
    // The comma V8 reports at the } of the next line (position 100 or so): the comma is what to fix.
    expect(problemsOf([...lines, '  ],', '}'].join('\n'))).toEqual(['- -: not valid JSON (line 6, column 4): a comma before }; JSON allows no trailing comma'])
    expect(problemsOf([...lines.slice(0, -1), `${lines.at(-1)},`, '  ]', '}'].join('\n'))).toEqual(['- -: not valid JSON (line 5, column 53): a comma before ]; JSON allows no trailing comma'])
    // V8 gives no position for an unexpected token: the loader finds it, and drops V8's copy of the text.
    expect(problemsOf('{\n  "name": \'n\'\n}')).toEqual([`- -: not valid JSON (line 2, column 11): Unexpected token '''`])
    expect(problemsOf('{\n  "name": "n",\n  "steps": [ tru ]\n}')).toEqual([`- -: not valid JSON (line 3, column 17): Unexpected token ' '`])
    expect(problemsOf('{\n  "name": "n" "description": "d"\n}')).toEqual([`- -: not valid JSON (line 2, column 15): Expected ',' or '}' after property value`])
    expect(problemsOf('{\n  "name": "n",\n')).toEqual(['- -: not valid JSON (line 3, column 1): Expected double-quoted property name'])
  })

  it('finds where JSON is invalid where V8 does, also when V8 does not say', () => {
    // Where V8 names the offset, the scanner must agree with it; where not, find one.
    const broken = ['{"a": 1,}', '{"a": 1', '{"a" 1}', '{"a": "x\n"}', '{"a": 1}}', '{"a": 01}', "{'a': 1}", '[1 2]', '{,}', '{"a":1,,"b":2}', 'falsey', '"abc', '{"a": [1, {"b": 2,}]}']
    for (const text of broken) {
      const position = /at position (\d+)/.exec((() => { try { JSON.parse(text) } catch (error) { return (error as Error).message } })() ?? '')?.[1]
      expect(findJsonErrorOffset(text), text).toBe(Number(position))
    }
    expect(['[,1]', '{"a": .5}', '{"a": tru}', '{"a": nul', '', '  '].map(findJsonErrorOffset)).toEqual([1, 6, 9, 9, 0, 2])
    for (const valid of ['{"a" : [true, false, null, -0.5e+3, "\\u00e9\\n"]}', '[[[]]]', '{}', '1', ' "x" ']) expect(findJsonErrorOffset(valid), valid).toBeUndefined()
    expect(findJsonErrorOffset(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBeUndefined() // no recursion to overflow
  })

  it('reads a file that starts with a byte order mark, and counts lines as without it', () => {
    expect(parseScenario('dir/bom.json', `\uFEFF${JSON.stringify(valid)}`)).toMatchObject({ id: 'bom', name: 'n' })
    const twice = '\uFEFF{\n  "name": "n",\n  "name": "m",\n  "description": "d",\n  "steps": [{ "request": { "method": "GET", "path": "/x" } }]\n}'
    expect(problemsOf(twice)).toEqual(['- name: duplicate key "name" (lines 2 and 3): JSON keeps only the last one, so the first would be ignored'])
    expect(problemsOf('\uFEFF{\n  "name": "n",\n}')).toEqual(['- -: not valid JSON (line 2, column 14): a comma before }; JSON allows no trailing comma'])
  })

  it('refuses a UTF-16, empty or non-UTF-8 file, or a directory named .json, with the file and what to do', async () => {
    const dir = await scenarioDir()
    const files: Array<[string, Buffer | undefined, string]> = [
      ['utf16.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(valid), 'utf16le')]), 'is UTF-16, not UTF-8; save it as UTF-8'],
      ['empty.json', Buffer.alloc(0), 'is empty'],
      ['latin1.json', Buffer.from('{\r\n  "name": "Caf\xe9"', 'latin1'), 'is not valid UTF-8 (line 2, column 15'],
      ['folder.json', undefined, 'it is a directory, not a file (a directory of scenarios goes to --dir)'],
    ]
    for (const [name, bytes] of files) {
      if (bytes) await writeFile(join(dir, name), bytes)
      else await mkdir(join(dir, name))
    }
    for (const [name, , message] of files) {
      await expect(loadScenarioFile(join(dir, name))).rejects.toThrow(`${join(dir, name)}: ${message}`)
    }
    // From a directory, every file's problem at once, in name order.
    const problems = await loadScenarios(dir).catch((error: ScenarioFileError) => error.problems.map((problem) => problem.message))
    expect(problems).toEqual([1, 3, 2, 0].map((index) => expect.stringContaining(files[index]![2])))
  })

  it('names a dangling symbolic link and a link loop among the files of a directory, with the others\' problems', async () => {
    const dir = await scenarioDir()
    await writeFile(join(dir, 'fine.json'), JSON.stringify(valid))
    await writeFile(join(dir, 'empty.json'), '')
    await symlink('gone.json', join(dir, 'broken.json'))
    await symlink('loop.json', join(dir, 'loop.json'))
    const problems = await loadScenarios(dir).catch((error: ScenarioFileError) => error.problems.map(formatProblem))
    expect(problems).toEqual([
      `${join(dir, 'broken.json')}: is a symbolic link to gone.json, which does not exist`,
      `${join(dir, 'empty.json')}: is empty`,
      `${join(dir, 'loop.json')}: cannot be read: a symbolic link loop`,
    ])
    await expect(loadScenarioFile(join(dir, 'loop.json'))).rejects.toThrow(ScenarioFileError)
  })

  it('leaves out hidden files: an Emacs lock (a dangling link) and a macOS ._ file beside a scenario', async () => {
    const dir = await scenarioDir()
    await writeFile(join(dir, 'fine.json'), JSON.stringify(valid))
    await symlink('partner@laptop.4242:1700000000', join(dir, '.#fine.json'))
    await writeFile(join(dir, '._fine.json'), Buffer.from([0, 5, 22, 7, 0, 2]))
    expect((await loadScenarios(dir)).map((scenario) => scenario.id)).toEqual(['fine'])
  })

  it('reads a scenario saved with CRLF, tabs and a byte order mark from a path with spaces, # and %', async () => {
    const dir = join(await scenarioDir(), 'my scenarios #1 %41 é 日本')
    await mkdir(dir)
    const text = JSON.stringify(valid, null, '\t').replaceAll('\n', '\r\n')
    await writeFile(join(dir, 'windows.json'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))
    await expect(loadScenarioFile(join(dir, 'windows.json'))).resolves.toMatchObject({ id: 'windows', name: 'n' })
    await expect(loadScenarios(dir)).resolves.toMatchObject([{ id: 'windows', name: 'n' }])
  })

  it('refuses a YAML scenario saved by a Windows editor (a byte order mark before steps:, CRLF), rather than skip it', async () => {
    const dir = await scenarioDir()
    await writeFile(join(dir, 'fine.json'), JSON.stringify(valid))
    await writeFile(join(dir, 'loan.yaml'), '\uFEFFsteps:\r\n  - request: { method: GET, path: /api/sandbox/config }\r\nname: loan\r\n')
    const problems = await loadScenarios(dir).catch((error: ScenarioFileError) => error.problems.map(formatProblem))
    expect(problems).toEqual([`${join(dir, 'loan.yaml')}: scenario files are JSON (.json); YAML is not read`])
  })

  it('says what a capture or key name may hold, and refuses the key names the runner reserves', () => {
    const get = { method: 'GET', path: '/api/sandbox/config' }
    expect(problemsOf(JSON.stringify({ ...valid, steps: [{ request: get, capture: { 'loan-id': 'x', '2nd': 'y' } }] }))).toEqual([
      '1 capture.loan-id: a variable name: letters, digits and _, not starting with a digit',
      '1 capture.2nd: a variable name: letters, digits and _, not starting with a digit',
    ])
    // "main" is the run's key (--api-key) and "none" sends no key: declared, each would become a fresh key.
    expect(problemsOf(JSON.stringify({ ...valid, keys: ['other', 'main', 'none'], steps: [{ request: { ...get, key: 'none' } }] }))).toEqual([
      '- keys[1]: "main" is always there: it is the run\'s own key (--api-key, or a fresh one), so list only the other keys',
      '- keys[2]: "none" means sending no key (a step\'s "key": "none"), so it cannot name one: pick another name',
    ])
    expect(problemsOf(JSON.stringify({ ...valid, keys: ['other-key'] }))).toEqual(['- keys[0]: a variable name: letters, digits and _, not starting with a digit'])
  })

  it('says a capture is a whole value when a reference reads into one', () => {
    const text = JSON.stringify({
      ...valid,
      steps: [
        { request: { method: 'GET', path: '/api/sandbox/state' }, capture: { loan: 'activeLoans[0]' } },
        { request: { method: 'GET', path: '/api/sandbox/loans/{{loan.id}}' }, expect: { body: { 'collateral.btc': '{{loan.collateral.btc}}' } } },
        { request: { method: 'GET', path: '/api/sandbox/loans/{{other.id}}' } },
      ],
    })
    expect(problemsOf(text).sort()).toEqual([
      '2 request.path: {{loan.id}} reads a field of the capture "loan", which is not supported (a capture is one whole value): capture the field itself, e.g. "loan_id": "activeLoans[0].id", and use {{loan_id}}',
      '2 expect.body.collateral.btc: {{loan.collateral.btc}} reads a field of the capture "loan", which is not supported (a capture is one whole value): capture the field itself, e.g. "loan_collateral_btc": "activeLoans[0].collateral.btc", and use {{loan_collateral_btc}}',
      '3 request.path: {{other.id}} is not captured by an earlier step',
    ].sort())
  })

  it('reports schema mistakes with step and field', () => {
    const text = JSON.stringify({
      name: 'n',
      description: 'd',
      tags: ['Bad Tag'],
      steps: [
        { request: { method: 'GET', path: '/ok' } },
        { request: { method: 'PUT', path: 'no-slash' } },
        { request: { method: 'GET', path: '/x' }, expect: { status: 'two hundred' } },
      ],
    })
    const problems = problemsOf(text)
    expect(problems).toContain('- tags[0]: lower-case words joined by -')
    expect(problems.some((p) => p.startsWith('2 '))).toBe(true)
    expect(problems.some((p) => p.startsWith('3 '))).toBe(true)
  })

  it('names the field of a type error inside a step, checking the step as the kind its key names', () => {
    const problemsOfStep = (step: unknown) => problemsOf(JSON.stringify({ ...valid, steps: [...valid.steps, step] }))
    const get = { method: 'GET', path: '/x' }
    expect(problemsOfStep({ request: { method: 'POST', path: 5 } })).toEqual(['2 request.path: Invalid input: expected string, received number'])
    expect(problemsOfStep({ request: { method: 'POST' } })).toEqual(['2 request.path: missing (expected a string)'])
    expect(problemsOfStep({ request: { method: 'FETCH', path: '/x' } })).toEqual(['2 request.method: Invalid option: expected one of "GET"|"POST"|"DELETE"'])
    expect(problemsOfStep({ request: get, expect: { status: 'abc' } })).toEqual(['2 expect.status: Invalid input: expected number, received string'])
    expect(problemsOfStep({ request: get, expect: { error_code: 5 } })).toEqual(['2 expect.error_code: Invalid input: expected string, received number'])
    expect(problemsOfStep({ replay: false })).toEqual(['2 replay: Invalid input: expected true'])
    expect(problemsOfStep({ wait_for_webhook: { type: 5 } })).toEqual(['2 wait_for_webhook.type: Invalid input: expected string, received number'])
    expect(problemsOfStep({ recover: { flow: 'x' } })).toEqual(['2 recover.flow: Invalid option: expected one of "loan"|"repayment"'])
    expect(problemsOfStep({ request: { method: 'POST', path: '/x', until_ms: 500 } })).toEqual(['2 request.until_ms: until_ms is for GET requests only: a POST or DELETE sent again would act again'])
    expect(problemsOfStep({ request: { ...get, until_ms: 0 } })).toEqual(['2 request.until_ms: Too small: expected number to be >0'])
    expect(problemsOfStep({ request: { ...get, until_ms: 500, drop_answer: true } })).toEqual(['2 request.until_ms: until_ms needs the answers: it cannot go with drop_answer'])
    expect(problemsOfStep({ requst: get })).toEqual(['2 -: a step needs one of request, replay, wait_for_webhook, recover (did you mean request?)'])
    expect(problemsOfStep({ foo: get })).toEqual(['2 -: a step needs one of request, replay, wait_for_webhook, recover'])
    // Unknown keys keep their own message, with the field a typo meant when one is close.
    expect(problemsOfStep({ request: get, foo: 1 })).toEqual(['2 -: Unrecognized key: "foo"'])
    expect(problemsOfStep({ request: { ...get, foo: 1 } })).toEqual(['2 request: Unrecognized key: "foo"'])
    expect(problemsOfStep({ request: get, expcet: { status: 200 } })).toEqual(['2 -: Unrecognized key: "expcet" (did you mean expect?)'])
    expect(problemsOfStep({ request: get, expect: { stauts: 200 } })).toEqual(['2 expect: Unrecognized key: "stauts" (did you mean status?)'])
    expect(problemsOfStep({ request: { ...get, idempotency_kye: 'k', foo: 1, methd: 'GET' } })).toEqual(['2 request: Unrecognized keys: "idempotency_kye", "foo", "methd" (did you mean idempotency_key for "idempotency_kye", method for "methd"?)'])
    expect(problemsOf(JSON.stringify({ ...valid, tag: ['x'] }))).toEqual(['- -: Unrecognized key: "tag" (did you mean tags?)'])
  })

  it('reports variables used before capture, undeclared keys and unknown matchers', () => {
    const text = JSON.stringify({
      ...valid,
      steps: [
        { replay: true },
        { request: { method: 'GET', path: '/loans/{{loanId}}', key: 'partner2' }, expect: { body: { debt: { $bigger: 1 }, ltv: { $exist: true } } }, capture: { loanId: 'id' } },
        { request: { method: 'GET', path: '/loans/{{loanId}}' } },
      ],
    })
    expect(problemsOf(text).sort()).toEqual([
      '1 replay: the first step has no request to replay',
      '2 expect.body.debt: unknown matcher $bigger',
      '2 expect.body.ltv: unknown matcher $exist (did you mean $exists?)',
      '2 request.key: key "partner2" is not declared in "keys"',
      '2 request.path: {{loanId}} is captured by this step, from its answer: the steps after it can use it',
    ])
  })

  it('names the variable or key a typo meant, and the later step that captures a variable used too soon', () => {
    const text = JSON.stringify({
      ...valid,
      keys: ['partner2'],
      steps: [
        { request: { method: 'GET', path: '/x' }, capture: { loanId: 'id' } },
        { request: { method: 'GET', path: '/loans/{{loanid}}/{{later}}/{{nothing}}', key: 'partnr2', idempotency_key: '{{$uuidd}}' } },
        { request: { method: 'GET', path: '/x' }, capture: { later: 'id' } },
        // Captured again further on: the step named is the first that captures it.
        { request: { method: 'GET', path: '/x' }, capture: { later: 'id' } },
      ],
    })
    expect(problemsOf(text).sort()).toEqual([
      '2 request.idempotency_key: {{$uuidd}} is not a built-in variable ($uuid, $run, $receiver_url) (did you mean {{$uuid}}?)',
      '2 request.key: key "partnr2" is not declared in "keys" (did you mean partner2?)',
      '2 request.path: {{later}} is captured only later, by step 3: a step can use what the steps before it captured',
      '2 request.path: {{loanid}} is not captured by an earlier step (did you mean {{loanId}}?)',
      '2 request.path: {{nothing}} is not captured by an earlier step',
    ])
  })

  it('refuses at load what would pass without checking anything, or fail for the file\'s own mistake', () => {
    const get = { method: 'GET', path: '/api/sandbox/config' }
    const text = JSON.stringify({
      ...valid,
      keys: ['other', 'other'],
      steps: [
        { request: { method: 'POST', path: '/api/sandbox/loans', body: { url: '{{$receiver_url}}' }, drop_answer: true }, expect: { status: 418 }, capture: { id: 'activeLoans.0.id' } },
        { wait_for_webhook: { type: 'sandbox.loan.issued' }, expect: { status: 418 } },
        { request: { ...get, body: { a: 1 } } },
        { request: get, expect: { body: { a: { $gt: null }, b: { $gte: true }, c: { $lt: '100' }, d: { $type: 'strin' }, e: { $exists: 'yes' }, f: { $length: -1 }, g: { $oneOf: 5 }, h: { $match: '(' } } } },
        { request: get, expect: { body: { 'activeLoans[id={{loanId}}].debt': 1, 'currencies[id=.x': 1 } }, capture: { x: 'a..b' } },
        { request: { ...get, path: '/api/sandbox/{{$nope}}' } },
      ],
    })
    expect(problemsOf(text).sort()).toEqual([
      '- keys: names each key once',
      '1 request.drop_answer: drop_answer throws the answer away, so there is nothing to expect or capture: check it with a replay step after',
      '2 expect: Unrecognized key: "status"',
      '3 request.body: a GET sends no body',
      '4 expect.body.a: $gt needs a number, got null',
      '4 expect.body.b: $gte needs a number, got true',
      '4 expect.body.c: $lt needs a number, got "100"',
      '4 expect.body.d: $type needs one of string, number, boolean, null, array, object, undefined, got "strin"',
      '4 expect.body.e: $exists needs true or false, got "yes"',
      '4 expect.body.f: $length needs a whole number from 0, got -1',
      '4 expect.body.g: $oneOf needs an array of the values allowed, got 5',
      '4 expect.body.h: $match needs a valid regular expression (Invalid regular expression: /(/: Unterminated group), got "("',
      '5 capture.x: cannot read the path "a..b" at "..b"',
      '5 expect.body.activeLoans[id={{loanId}}].debt: {{loanId}} is not captured by an earlier step',
      '5 expect.body.currencies[id=.x: cannot read the path "currencies[id=.x" at "[id=.x"',
      '6 request.path: {{$nope}} is not a built-in variable ($uuid, $run, $receiver_url)',
    ].sort())
  })

  it('says in one line that a JSON file with no name and no steps is no scenario, and how to keep it in the directory', () => {
    // A fixture or a package.json beside the scenarios got four schema lines and no way out.
    const notScenario = 'is not a scenario (it has no "name" and no "steps"): in a directory of scenarios, start the name of another JSON file with _ (_bad.json), which the run leaves out'
    expect(problemsOf('{"amount": 1, "currency": "USDT"}')).toEqual([`- -: ${notScenario}`])
    expect(problemsOf('[1, 2]')).toEqual([`- -: ${notScenario.replace('it has no "name" and no "steps"', 'it is an array, not an object')}`])
    // A scenario under way keeps the schema's own lines.
    expect(problemsOf('{"name": "n"}')).toEqual(['- description: missing (expected a string)', '- steps: missing (expected an array)'])
  })

  it('says where a field written one level off belongs, rather than only that it is unrecognized', () => {
    const problemsOfStep = (step: unknown) => problemsOf(JSON.stringify({ ...valid, steps: [...valid.steps, step] }))
    const post = { method: 'POST', path: '/api/sandbox/loans' }
    expect(problemsOfStep({ request: post, body: { a: 1 }, status: 200 })).toEqual(['2 -: Unrecognized keys: "body", "status" (body goes in request to send it, or in expect to check the answer\'s; status goes in expect)'])
    expect(problemsOfStep({ request: { ...post, expect: { status: 200 }, capture: { id: 'x' } } })).toEqual(['2 request: Unrecognized keys: "expect", "capture" (expect and capture go in the step, beside request)'])
    expect(problemsOfStep({ request: { ...post, error_code: 'X' } })).toEqual(['2 request: Unrecognized key: "error_code" (error_code goes in expect, beside request)'])
    expect(problemsOfStep({ request: post, expect: { capture: { id: 'x' }, path: '/x' } })).toEqual(['2 expect: Unrecognized keys: "capture", "path" (capture goes in the step, beside expect; path goes in request)'])
    // A typo of a field keeps its own hint; the two together in one message.
    expect(problemsOfStep({ request: post, stauts: 200, method: 'GET' })).toEqual(['2 -: Unrecognized keys: "stauts", "method" (did you mean status for "stauts"?) (method goes in request)'])
  })

  it('refuses a header name no HTTP header can have, in a request\'s expect and in a webhook wait\'s', () => {
    // A colon copied from a curl -v line, a space: the request went out and then the check threw
    // (exit 1), or for a webhook never matched, so that `$exists: false` passed without checking.
    const text = JSON.stringify({
      ...valid,
      steps: [
        { request: { method: 'GET', path: '/api/sandbox/config' }, expect: { headers: { 'X-Request-Id:': { $type: 'string' }, 'content type': 'x', 'RateLimit-Limit': { $exists: false } } } },
        { wait_for_webhook: { type: 'sandbox.test' }, expect: { headers: { 'x-sandbox-signature ': { $exists: false } } } },
      ],
    })
    const rule = 'an HTTP header name: letters, digits and !#$%&\'*+-.^_`|~, without spaces or a colon'
    expect(problemsOf(text)).toEqual([
      `1 expect.headers.X-Request-Id:: ${rule}`,
      `1 expect.headers.content type: ${rule}`,
      `2 expect.headers.x-sandbox-signature : ${rule}`,
    ])
  })

  it('leaves operands and indexes that come from variables to the run, where their values are known', () => {
    const text = JSON.stringify({
      ...valid,
      steps: [
        { request: { method: 'GET', path: '/api/sandbox/config' }, capture: { max: 'limits.loan_amount.max', i: 'limits.loan_amount.min' }, expect: { body: { nope: { $type: 'undefined' } } } },
        { request: { method: 'GET', path: '/api/sandbox/config' }, expect: { body: { 'limits.loan_amount.min': { $lt: '{{max}}' }, 'currencies[{{i}}]': { $exists: false } } } },
      ],
    })
    expect(parseScenario('dir/vars.json', text).steps).toHaveLength(2)
  })

  it('accepts a minimal scenario and names it after its file', () => {
    expect(parseScenario('dir/my-check.json', JSON.stringify(valid))).toMatchObject({ id: 'my-check', tags: [] })
  })
})

describe('JUnit report', () => {
  const report: RunReport = {
    base_url: 'http://127.0.0.1:1',
    started_server: true,
    api_version: '0.3.0',
    started_at: '2026-01-02T03:04:05.000Z',
    duration_ms: 1500,
    passed: 1,
    failed: 2,
    skipped: 1,
    requests: 7,
    scenarios: [
      { id: 'ok', name: 'Fine <one>', file: 'ok.json', tags: [], status: 'passed', duration_ms: 10, requests: 1, steps: [
        { index: 0, name: 'get', kind: 'request', method: 'GET', path: '/a', status: 200, error_code: null, duration_ms: 3, ok: true, failures: [], note: '2 attempts' },
      ] },
      { id: 'bad', name: 'Broken & "quoted"', file: 'bad.json', tags: [], status: 'failed', duration_ms: 20, requests: 2, steps: [
        { index: 0, name: 'post', kind: 'request', method: 'POST', path: '/b', status: 409, error_code: 'FLOW_CONFLICT', duration_ms: 4, ok: false,
          failures: [{ field: 'status', expected: 200, actual: 409, message: 'status: expected 200, got 409' }], sent: { body: { action: 'run_kyt' }, idempotency_key: 'k1' }, received: { error_code: 'FLOW_CONFLICT' },
          note: 'sent 4 times in 300 ms; expect never held' },
      ] },
      { id: 'far', name: 'Remote only', file: 'far.json', tags: ['local-only'], status: 'skipped', duration_ms: 0, requests: 0, steps: [], error: 'local-only' },
      { id: 'gone', name: 'Server went away', file: 'gone.json', tags: [], status: 'failed', duration_ms: 900, requests: 4, steps: [],
        error: 'cannot reach http://127.0.0.1:1/api/sandbox/config (ECONNREFUSED) after 4 attempts', connection_error: true },
    ],
  }

  it('is well-formed XML with one testcase per scenario and the failure diff', () => {
    const xml = formatJunitReport(report)
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml)
    const suite = parsed.testsuites.testsuite
    expect(parsed.testsuites).toMatchObject({ tests: '4', failures: '1', errors: '1', time: '1.500' })
    expect(suite).toMatchObject({ tests: '4', failures: '1', errors: '1', skipped: '1' })
    expect(suite.testcase).toHaveLength(4)
    expect(suite.testcase[0]).toMatchObject({ name: 'Fine <one>', classname: 'scenarios.ok' })
    const failure = suite.testcase[1].failure
    expect(failure.message).toBe('step 1 (post): status: expected 200, got 409')
    expect(failure['#text']).toContain('sent: {"action":"run_kyt"}')
    expect(failure['#text']).toContain('- expected 200')
    expect(failure['#text']).toContain('+ received 409')
    expect(suite.testcase[1].name).toBe('Broken & "quoted"')
    // Step notes (retries, hints) are in the report as in the terminal: on the failure and in the step log.
    expect(failure['#text']).toContain('note: sent 4 times in 300 ms; expect never held')
    expect(suite.testcase[1]['system-out']).toContain('FAIL 1. POST /b 409 FLOW_CONFLICT 4ms (post)\n      sent 4 times in 300 ms; expect never held')
    // The scenario's file heads its step log: <testcase> has no attribute for it in junit-10.xsd.
    expect(suite.testcase[0]['system-out']).toBe('file: ok.json\nok   1. GET /a 200 3ms (get)\n      2 attempts')
    expect(suite.testcase[2]['system-out']).toBe('file: far.json')
    expect(suite.testcase[2].skipped).toEqual({ message: 'local-only' })
    // A server that cannot be reached is an error (the scenario could not run), not a failed check.
    expect(suite.testcase[3].failure).toBeUndefined()
    expect(suite.testcase[3].error).toMatchObject({ type: 'ConnectionError', message: expect.stringMatching(/^cannot reach .*ECONNREFUSED/) })
  })

  // What the Jenkins xUnit plugin's junit-10.xsd allows (it refuses a file with anything else), as
  // the plugin has had it since its December 2018 revision (still so in 2025): attributes per
  // element, those it requires, and the elements each may hold. An earlier revision allowed more
  // on <testcase> (file, line, ...): a report made to that one is refused by today's plugin.
  const JUNIT_10: Record<string, { attributes: string[]; required?: string[]; children: string[] }> = {
    testsuites: { attributes: ['name', 'time', 'tests', 'failures', 'errors'], children: ['testsuite'] },
    testsuite: {
      attributes: ['name', 'tests', 'failures', 'errors', 'group', 'time', 'skipped', 'timestamp', 'hostname', 'id', 'package', 'file', 'log', 'url', 'version'],
      required: ['name', 'tests', 'failures', 'errors'],
      children: ['testsuite', 'properties', 'testcase', 'system-out', 'system-err'],
    },
    properties: { attributes: [], children: ['property'] },
    property: { attributes: ['name', 'value'], required: ['name', 'value'], children: [] },
    testcase: {
      attributes: ['name', 'time', 'classname', 'group'],
      required: ['name'],
      children: ['skipped', 'error', 'failure', 'rerunFailure', 'rerunError', 'flakyFailure', 'flakyError', 'system-out', 'system-err'],
    },
    failure: { attributes: ['type', 'message'], children: [] },
    error: { attributes: ['type', 'message'], children: [] },
    skipped: { attributes: ['type', 'message'], children: [] },
    'system-out': { attributes: [], children: [] },
    'system-err': { attributes: [], children: [] },
  }
  // The schema's type of `time` on <testsuites> and <testsuite> (digits, optional thousands commas, up to 3 decimals).
  const SUREFIRE_TIME = /^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?$/

  /** Every element, attribute and nesting of the report that junit-10.xsd would refuse. */
  function findSchemaProblems(xml: string): string[] {
    const tree = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', preserveOrder: true }).parse(xml) as Array<Record<string, unknown>>
    const problems: string[] = []
    const visit = (nodes: Array<Record<string, unknown>>, parent: string | undefined) => {
      for (const node of nodes) {
        const name = Object.keys(node).find((key) => key !== ':@' && key !== '#text')
        if (!name || name === '?xml') continue
        const rule = JUNIT_10[name]
        if (!rule) problems.push(`unknown element <${name}>`)
        else if (parent && !JUNIT_10[parent]!.children.includes(name)) problems.push(`<${name}> inside <${parent}>`)
        const attributes = (node[':@'] ?? {}) as Record<string, string>
        for (const attribute of Object.keys(attributes)) {
          if (rule && !rule.attributes.includes(attribute.slice(1))) problems.push(`<${name} ${attribute.slice(1)}>`)
        }
        for (const required of rule?.required ?? []) if (!(`@${required}` in attributes)) problems.push(`<${name}> without ${required}`)
        if ((name === 'testsuites' || name === 'testsuite') && attributes['@time'] !== undefined && !SUREFIRE_TIME.test(attributes['@time'])) problems.push(`<${name} time="${attributes['@time']}">`)
        visit(node[name] as Array<Record<string, unknown>>, name)
      }
    }
    visit(tree, undefined)
    return problems
  }

  it('keeps to the Jenkins xUnit junit-10.xsd: no skipped on <testsuites>, errors counted apart', () => {
    const xml = formatJunitReport(report)
    expect(findSchemaProblems(xml)).toEqual([])
    // The check itself finds what the plugin refused.
    expect(findSchemaProblems(xml.replace('<testsuites name="sandbox run"', '<testsuites skipped="1" name="sandbox run"'))).toEqual(['<testsuites skipped>'])
    expect(findSchemaProblems(xml.replaceAll('<testcase ', '<testcase file="ok.json" '))).toEqual(Array(4).fill('<testcase file>'))
  })

  const tempDir = useTempDirs('sandbox-junit')
  // The schema itself is not shipped here; point SANDBOX_JUNIT_XSD at a copy (from
  // jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd)
  // to have xmllint check the report against it too.
  const xsd = process.env.SANDBOX_JUNIT_XSD
  const xmllint = (() => { try { execFileSync('xmllint', ['--version'], { stdio: 'ignore' }); return true } catch { return false } })()
  it.skipIf(!xsd || !existsSync(xsd) || !xmllint)('validates against junit-10.xsd with xmllint (SANDBOX_JUNIT_XSD)', async () => {
    const file = join(await tempDir(), 'report.xml')
    await writeFile(file, formatJunitReport(report))
    expect(() => execFileSync('xmllint', ['--noout', '--schema', xsd!, file], { stdio: 'pipe' })).not.toThrow()
  })
})
