import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { open, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { constructWebhookEvent, createSandbox as createLibrarySandbox, createSandboxClient, listenSandbox, SandboxApiError } from '../../src/index.js'
import { createRunProgress } from '../../src/cli/run-progress.js'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenTestApi } from '../helpers/api.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// The README's walkthroughs run as a newcomer copies them, in order: the prose around them can be
// right while the block itself leaves output unreadable or state behind for the next run.
const README = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')
const makeTempDir = useTempDirs('readme-walk')
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A sandbox on 127.0.0.1, port 0, stopped after the test. */
async function startServer(): Promise<string> {
  const sandbox = await createSandbox({ storage: 'memory', logError: () => {} })
  const listener = await listenTestApi(sandbox)
  cleanups.push(async () => { await listener.close(); await sandbox.close() })
  return listener.url
}

/** The fenced block that starts with FIRST_LINE. */
function readBlock(fence: string, firstLine: string): string {
  const start = README.indexOf(`\`\`\`${fence}\n${firstLine}`)
  expect(start, firstLine).toBeGreaterThan(-1)
  const body = README.slice(start + fence.length + 4)
  return body.slice(0, body.indexOf('\n```'))
}

// Reads a path such as activeLoans[0].id or list[-1].x from the JSON on stdin.
const PICK = `let text = ''
process.stdin.on('data', (chunk) => { text += chunk }).on('end', () => {
  let value = JSON.parse(text)
  for (const part of process.argv[2].match(/[^.[\\]]+/g)) value = Array.isArray(value) ? value.at(Number(part)) : value[part]
  process.stdout.write(String(value))
})
`

describe('the README walkthroughs', () => {
  it('"Walk a loan with curl" runs as written: one answer per line, ids where its comments say, the loan closed at the end', async () => {
    const block = readBlock('sh', 'KEY=')
    const url = await startServer()
    const dir = await makeTempDir()
    await writeFile(join(dir, 'pick.mjs'), PICK)
    // The reader copies each id from the answer above, at the path its comment names: so does this.
    const lines = block.split('\n')
    const script = lines.map((line, index) => {
      const placeholder = /^(\w+)=\w+_\.\.\.\s/.exec(line)
      if (!placeholder) return line.replace('http://127.0.0.1:4010', url)
      const path = /# -> ([\w.[\]-]+)/.exec(lines[index - 1]!)?.[1]
      expect(path, `the line before ${placeholder[1]}= says where its id is`).toBeDefined()
      return `${placeholder[1]}=$(tail -n 1 out.txt | "${process.execPath}" pick.mjs '${path}')`
    }).join('\n')
    const out = await open(join(dir, 'out.txt'), 'w')
    const child = spawn('bash', ['-euc', script], { cwd: dir, stdio: ['ignore', out.fd, 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (chunk) => { stderr += chunk })
    const code = await new Promise((resolve) => child.on('close', resolve))
    await out.close()
    expect([code, stderr]).toEqual([0, ''])

    const answers = (await readFile(join(dir, 'out.txt'), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line))
    expect(answers).toHaveLength(lines.filter((line) => /^(curl|post) /.test(line)).length)
    expect(answers.filter((answer) => 'error_code' in answer)).toEqual([])
    const last = answers.at(-1)
    const issued = answers[4].activeLoans[0].id
    expect([last.activeLoans, last.loanHistory.map((loan: { id: string; status: string }) => [loan.id, loan.status])]).toEqual([[], [[issued, 'closed']]])
  })

  it('the client library example runs twice on one key and leaves no draft or loan open', async () => {
    const block = readBlock('ts', "import { createSandboxClient, SandboxApiError } from 'partner-sandbox/client'")
    const url = await startServer()
    const apiKey = `sk_sandbox_readme_${randomUUID().replaceAll('-', '')}`
    const code = block.split('\n').filter((line) => !line.startsWith('import ')).join('\n')
      .replace("'http://127.0.0.1:4010'", JSON.stringify(url)).replace('process.env.SANDBOX_API_KEY', JSON.stringify(apiKey))
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>
    const example = new AsyncFunction('createSandboxClient', 'SandboxApiError', 'console', code)
    for (const run of [1, 2]) {
      const logged: unknown[][] = []
      await example(createSandboxClient, SandboxApiError, { log: (...values: unknown[]) => logged.push(values) })
      expect([run, logged]).toEqual([run, [[409, 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER', expect.stringMatching(/^req_/)]]])
    }
    const state = await createSandboxClient({ baseUrl: url, apiKey }).listLoans()
    expect([state.draft, state.activeLoans, state.wallet.BTC]).toEqual([null, [], 2])
  })

  it('"Writing a scenario": a step\'s name shows after its method and path, as the README says (the example itself runs in scenarios.test.ts)', async () => {
    expect(README.replace(/\s+/g, ' ')).toContain('Any step may have a `name`, shown in the report after the method and path.')
    const scenario = parseScenario('interest.json', readBlock('json', '{\n  "name": "Interest repayment"'))
    const url = await startServer()
    const lines: string[] = []
    const report = await runScenarios([scenario], { baseUrl: url, apiKey: `sk_sandbox_readme_${randomUUID().replaceAll('-', '')}`, ...createRunProgress((line) => lines.push(stripVTControlCharacters(line))) })
    expect([report.passed, report.failed]).toEqual([1, 0])
    expect(lines.find((line) => line.includes('clean up: repaying the whole debt'))).toMatch(/ POST +\/api\/sandbox\/loans\/loan_\w+\/action 200 \d+ms {2}clean up: /)
  })

  it('a block that starts `sandbox serve` and runs the scenarios against it lets serve take the runner\'s local receiver', () => {
    // Without --allow-local-webhooks the three webhook scenarios fail (400 WEBHOOK_URL_INVALID), so
    // a reader who copies the block sees failures that are not theirs.
    const blocks = [...README.matchAll(/```(?:sh|yaml)\n([\s\S]*?)\n```/g)].map((match) => match[1]!)
    const walks = blocks.filter((block) => /sandbox run --base-url https?:\/\/127\.0\.0\.1/.test(block) && /sandbox serve /.test(block))
    expect(walks.length).toBeGreaterThan(1)
    const serves = walks.flatMap((block) => block.split('\n').filter((line) => /sandbox serve /.test(line)))
    expect(serves.filter((line) => !line.includes('--allow-local-webhooks'))).toEqual([])
  })

  it('no shell line pipes into an option, which a shell runs as a command named after it', () => {
    // `npx sandbox run --list | --tag webhooks | --bail` listed alternatives: pasted, it printed
    // "bash: --tag: command not found".
    const blocks = [...README.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]!)
    const lines = blocks.flatMap((block) => block.split('\n')).map((line) => line.replace(/\s+#.*$/, ''))
    expect(lines.filter((line) => /\|\s*-/.test(line))).toEqual([])
  })

  it('a block that forwards webhooks to a local port and waits for them to be delivered starts a receiver on that port', () => {
    // "Webhooks without a tunnel" forwarded to :3000 before the README had said what listens
    // there: trigger --wait, pasted, reported ECONNREFUSED and exit 1.
    const blocks = [...README.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]!)
    const waiting = blocks.filter((block) => /sandbox webhook trigger .*--wait/.test(block) && /--webhook-forward-to http:\/\/(localhost|127\.0\.0\.1):\d+/.test(block))
    expect(waiting.length).toBeGreaterThan(1)
    for (const block of waiting) {
      const port = /--webhook-forward-to http:\/\/(?:localhost|127\.0\.0\.1):(\d+)/.exec(block)![1]
      expect(block, block).toMatch(new RegExp(`receiver\\.mjs ${port}\\b|webhook listen --port ${port}\\b`))
    }
  })

  it('every shell block calls the CLI as npx sandbox, which a project that installed the package has (no sandbox on the PATH)', () => {
    const blocks = [...README.matchAll(/```(?:sh|yaml)\n([\s\S]*?)\n```/g)].map((match) => match[1]!)
    expect(blocks.length).toBeGreaterThan(5)
    const bare = blocks.flatMap((block) => block.split('\n')).filter((line) => /^(\s*- run:\s*)?(\w+=\S+\s+)*sandbox\s/.test(line))
    expect(bare).toEqual([])
  })

  it('"The server in your own tests" is a test file as written: its test passes, the delivery it forwards verifies with sandbox.forwardSecret, and its afterAll closes both', async () => {
    // It was a fragment ("// ... walk loans"): pasted into a test file, vitest said "No test suite found".
    const block = readBlock('ts', '// loan.test.ts, run by vitest')
    // The reader's receiver is at 127.0.0.1:3000, which may be anyone's here: one on a free port
    // stands in, checking each delivery with the secret the block says it verifies with.
    let secret = ''
    const received: string[] = []
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
        try {
          received.push(constructWebhookEvent({ secret, body: Buffer.concat(chunks), headers: request.headers }).type)
        } catch (error) {
          received.push(String(error))
        }
        response.end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => receiver.close(() => resolve())))
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`
    const code = block.split('\n').filter((line) => !line.startsWith('import ')).join('\n')
      .replace("'http://127.0.0.1:3000/webhooks'", JSON.stringify(receiverUrl))
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>
    const example = new AsyncFunction('afterAll', 'expect', 'test', 'createSandbox', 'listenSandbox', 'createSandboxClient', code)
    const tests: Array<() => Promise<void>> = []
    const afterAlls: Array<() => Promise<void>> = []
    let url = ''
    await example(
      (hook: () => Promise<void>) => afterAlls.push(hook), expect, (_name: string, body: () => Promise<void>) => tests.push(body),
      async (options: Parameters<typeof createLibrarySandbox>[0]) => {
        const sandbox = await createLibrarySandbox({ ...options, logError: () => {} })
        secret = sandbox.forwardSecret!
        return sandbox
      },
      async (...args: Parameters<typeof listenSandbox>) => {
        const listener = await listenSandbox(...args)
        url = listener.url
        return listener
      },
      createSandboxClient,
    )
    expect([tests.length, afterAlls.length, url.replace(/\d+$/, 'PORT')]).toEqual([1, 1, 'http://127.0.0.1:PORT'])
    for (const body of tests) await body()
    expect(received).toEqual(['sandbox.loan.issued'])
    for (const hook of afterAlls) await hook()
    await expect(fetch(`${url}/api/sandbox/openapi.json`)).rejects.toThrow('fetch failed')
  })
})
