import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isBuiltin } from 'node:module'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')

/** A TypeScript project of the given module type with the package and @types/node installed, removed after the test. */
async function createTypeScriptProject(name: string, type: 'module' | 'commonjs'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `sandbox-${name}-`))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  await mkdir(join(dir, 'node_modules/@types'), { recursive: true })
  await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
  await symlink(join(ROOT, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir')
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type }))
  return dir
}

/**
 * Whether an `engines.node` range admits VERSION, in the forms package-lock.json holds (>=, ^, a
 * bare major, alternatives with ||); another form fails the test, to be taught here.
 */
function admitsNode(range: string, version: string): boolean {
  const parse = (text: string) => [...text.split('.').map(Number), 0, 0].slice(0, 3) as [number, number, number]
  const compare = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!
  const node = parse(version)
  return range.split('||').some((part) => {
    const text = part.trim()
    const atLeast = /^>=\s*([\d.]+)$/.exec(text)
    if (atLeast) return compare(node, parse(atLeast[1]!)) >= 0
    const caret = /^\^([\d.]+)$/.exec(text)
    if (caret) return node[0] === parse(caret[1]!)[0] && compare(node, parse(caret[1]!)) >= 0
    if (/^\d+$/.test(text)) return node[0] === Number(text)
    throw new Error(`engines.node range not understood: ${range}`)
  })
}

describe('the published package', () => {
  it('holds only modules built from the current src/, and what the CLI needs at run time', async () => {
    // A module left in dist/ by an earlier build would be published, and may not even load.
    const built = (await readdir(join(ROOT, 'dist'), { recursive: true })).filter((file) => file.endsWith('.js'))
    // dist/cjs/ holds the CommonJS build of the client and webhook entries, from the same src/.
    const orphans = built.filter((file) => !existsSync(join(ROOT, 'src', file.replace(/^cjs\//, '').replace(/\.js$/, '.ts'))))
    expect(built.filter((file) => file.startsWith('cjs/client/') || file.startsWith('cjs/webhooks/')).length).toBeGreaterThan(10)
    expect(orphans).toEqual([])

    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    // npm keeps its cache and logs under HOME, which a runner may not let it write (docker --user
    // with HOME=/): a cache of its own, and no update check, which would go to the registry.
    const cache = await mkdtemp(join(tmpdir(), 'sandbox-npm-cache-'))
    onTestFinished(() => rm(cache, { recursive: true, force: true }))
    const env = { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' }
    const { stdout } = await promisify(execFile)(npm, ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], { cwd: ROOT, env })
    const files: string[] = JSON.parse(stdout)[0].files.map((file: { path: string }) => file.path)
    for (const needed of ['bin/sandbox.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'dist/cjs/package.json', 'dist/cjs/client/index.d.ts', 'dist/openapi.json', 'dist/scenario.schema.json', 'fixtures/config.json', 'fixtures/receivers/receiver.mjs', 'scenarios/loan-flow.json', 'README.md']) {
      expect(files, needed).toContain(needed)
    }
    expect(files.filter((file) => file.startsWith('test/') || file.startsWith('src/') || file.endsWith('.map') || file.endsWith('.gitattributes'))).toEqual([])
    // Each module and its types, the two JSON documents (openapi.json, scenario.schema.json) and
    // the package.json that makes dist/cjs/ CommonJS.
    expect(files.filter((file) => file.startsWith('dist/')).length).toBe(built.length * 2 + 3)
  }, 60_000)

  it('declares every package its modules and declarations import: pnpm and Yarn PnP give it only those', async () => {
    // npm hoists a dependency's dependencies next to the package, where an import of one that
    // package.json does not name still loads; under pnpm or PnP it fails, in a partner's project.
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
    const files = [...(await readdir(join(ROOT, 'dist'), { recursive: true })).filter((file) => /\.(js|d\.ts)$/.test(file)).map((file) => join(ROOT, 'dist', file)), join(ROOT, 'bin/sandbox.js')]
    const imported = new Map<string, string>()
    for (const file of files) {
      for (const [, specifier] of (await readFile(file, 'utf8')).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g)) {
        if (specifier!.startsWith('.') || isBuiltin(specifier!)) continue
        const name = specifier!.split('/').slice(0, specifier!.startsWith('@') ? 2 : 1).join('/')
        imported.set(name, file.slice(ROOT.length + 1))
      }
    }
    expect(imported.size).toBeGreaterThan(5)
    const undeclared = [...imported].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (${file})`)
    expect(undeclared).toEqual([])
  })

  it('locks only production packages whose engines admit the oldest Node its own engines admit', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
    const oldest = /^>=\s*([\d.]+)$/.exec(pkg.engines.node)![1]!
    const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; engines?: { node?: string } }> }
    const refused = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.dev && entry.engines?.node !== undefined && !admitsNode(entry.engines.node, oldest))
      .map(([path, entry]) => `${path} ${entry.engines!.node}`)
    // The lock is what CI and `npm ci` install, not what a partner's install resolves: Yarn 1 takes
    // the newest release of each range, whatever its engines (README, pnpm and Yarn).
    expect(refused).toEqual([])
  })

  it('loads by its name from an ES module and from CommonJS (require of the ESM build, Node >= 20.19), one copy of each class', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-consumer-'))
    try {
      await mkdir(join(dir, 'node_modules'))
      await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
      await writeFile(join(dir, 'package.json'), '{"type":"commonjs"}')
      await writeFile(join(dir, 'use.cjs'), "const lib = require('partner-sandbox'); console.log(typeof lib.createSandbox, typeof lib.listenSandbox, typeof lib.createSandboxClient)")
      await writeFile(join(dir, 'use.mjs'), "import { createSandbox, listenSandbox, createSandboxClient } from 'partner-sandbox'; console.log(typeof createSandbox, typeof listenSandbox, typeof createSandboxClient)")
      await writeFile(join(dir, 'parts.cjs'), "const { createSandboxClient, ErrorCodes } = require('partner-sandbox/client'); const { constructWebhookEvent } = require('partner-sandbox/webhooks'); console.log(typeof createSandboxClient, typeof ErrorCodes, typeof constructWebhookEvent)")
      await writeFile(join(dir, 'parts.mjs'), "import { createSandboxClient, ErrorCodes } from 'partner-sandbox/client'; import { constructWebhookEvent } from 'partner-sandbox/webhooks'; console.log(typeof createSandboxClient, typeof ErrorCodes, typeof constructWebhookEvent)")
      for (const file of ['use.cjs', 'use.mjs']) {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [file], { cwd: dir })
        expect([file, stdout, stderr]).toEqual([file, 'function function function\n', ''])
      }
      for (const file of ['parts.cjs', 'parts.mjs']) {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [file], { cwd: dir })
        expect([file, stdout, stderr]).toEqual([file, 'function object function\n', ''])
      }
      // Where require cannot load an ES module (Jest's loader, as Node without it), the two parts
      // have a CommonJS build; the root, which needs h3, has none.
      const withoutRequireOfEsm = async (file: string) => promisify(execFile)(process.execPath, ['--no-experimental-require-module', file], { cwd: dir }).catch((error: { stdout: string; stderr: string }) => error)
      expect(await withoutRequireOfEsm('parts.cjs')).toMatchObject({ stdout: 'function object function\n', stderr: '' })
      expect((await withoutRequireOfEsm('use.cjs')).stderr).toContain('ERR_REQUIRE_ESM')
      // Where it can, require loads the ES build (the module-sync condition): the root and the parts
      // share their classes, so an error from one passes `instanceof` against the other's.
      await writeFile(join(dir, 'same.cjs'), "const root = require('partner-sandbox'); const client = require('partner-sandbox/client'); const webhooks = require('partner-sandbox/webhooks'); console.log(root.SandboxApiError === client.SandboxApiError, root.WebhookVerificationError === webhooks.WebhookVerificationError)")
      expect((await promisify(execFile)(process.execPath, ['same.cjs'], { cwd: dir })).stdout).toBe('true true\n')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  // A partner's receiver or test file that only calls a sandbox, or verifies its webhooks, should
  // not pay for the server: the root loads h3, listhen, unstorage and every schema (~0.5 s).
  it('partner-sandbox/client and partner-sandbox/webhooks load none of the server, and the root no listhen', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-parts-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, 'node_modules'))
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    const loadedBy = async (entry: string): Promise<string[]> => {
      const file = join(dir, `modules-${entry.replace(/\W/g, '-')}.txt`)
      const script = `import(${JSON.stringify(entry)})`
      await promisify(execFile)(process.execPath, ['--import', join(ROOT, 'test/helpers/record-modules.mjs'), '--input-type=module', '-e', script], { cwd: dir, env: { ...process.env, RECORD_MODULES: file } })
      return (await readFile(file, 'utf8')).split('\n').filter(Boolean)
    }
    const server = /\/node_modules\/(h3|listhen|unstorage|ioredis|undici|srvx|zod)\/|\/dist\/(server|storage|scenarios|webhook-tools)\//
    // The recording sees the server where it is loaded; listhen (with node-forge) only once a
    // sandbox listens, as a suite that calls sandbox.fetch never does.
    const root = await loadedBy('partner-sandbox')
    expect(root.filter((url) => server.test(url)).length).toBeGreaterThan(10)
    expect(root.filter((url) => url.includes('/node_modules/listhen/'))).toEqual([])
    const client = await loadedBy('partner-sandbox/client')
    expect(client.some((url) => url.endsWith('/dist/client/sandbox-client.js'))).toBe(true)
    expect(client.filter((url) => server.test(url))).toEqual([])
    const webhooks = await loadedBy('partner-sandbox/webhooks')
    expect(webhooks.some((url) => url.endsWith('/dist/webhooks/construct-event.js'))).toBe(true)
    expect(webhooks.filter((url) => server.test(url) || url.includes('/node_modules/'))).toEqual([])
  })

  it('type-checks the client and webhook entries in a CommonJS TypeScript project (module commonjs under TypeScript 5 and 7, node16 and node20 under 7), and the root from commonjs and node20', async () => {
    // Such a project compiles imports to require(): its types must be the CommonJS build's, and
    // `module: commonjs` resolves as Node 10 did, without `exports` (typesVersions maps the parts).
    // TypeScript 7 has no Node 10 resolution any more, and checks node16 as 5.9 does, faster.
    const tsc5 = join(ROOT, 'test/client-gen/node_modules/typescript/bin/tsc')
    expect(existsSync(tsc5), 'run npm test (pretest installs test/client-gen)').toBe(true)
    const tsc7 = join(ROOT, 'node_modules/typescript/bin/tsc')
    const dir = await createTypeScriptProject('cjs-ts-consumer', 'commonjs')
    await writeFile(join(dir, 'use.ts'), [
      "import { createSandboxClient, SandboxApiError, type Loan } from 'partner-sandbox/client'",
      "import { constructWebhookEvent, WebhookVerificationError } from 'partner-sandbox/webhooks'",
      'export async function callOnly(body: Buffer, headers: Record<string, string>): Promise<string> {',
      "  const client = createSandboxClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'sk_sandbox_consumer_key_0001' })",
      '  try {',
      "    const event = constructWebhookEvent({ secret: 'whsec_consumer_secret_0001', body, headers })",
      '    const loans: Loan[] = (await client.listLoans()).activeLoans',
      '    return loans[0]?.id ?? event.id',
      '  } catch (error) {',
      "    if (error instanceof SandboxApiError) return error.errorCode ?? 'none'",
      '    if (error instanceof WebhookVerificationError) return error.code',
      '    throw error',
      '  }',
      '}',
    ].join('\n'))
    // The root has no CommonJS build: required, Node >= 20.19 loads its ES build, which TypeScript
    // allows from module node20 on (under node16 that import is TS1479, as the README says).
    await writeFile(join(dir, 'root.ts'), [
      "import { createSandbox, listenSandbox } from 'partner-sandbox'",
      'export async function start(): Promise<string> {',
      '  const listener = await listenSandbox(await createSandbox())',
      '  return listener.url',
      '}',
    ].join('\n'))
    // commonjs under TypeScript 5 as `tsc --init` sets it up (esModuleInterop, which zod's own
    // declarations need there, and skipLibCheck: this one is about resolution); under 7 (which
    // resolves commonjs through `exports` and cannot turn esModuleInterop off), node16 and node20
    // with every declaration checked.
    const configs = [
      ['commonjs', tsc5, { module: 'commonjs', esModuleInterop: true, skipLibCheck: true }, ['use.ts', 'root.ts']],
      ['commonjs-7', tsc7, { module: 'commonjs' }, ['use.ts', 'root.ts']],
      ['node16', tsc7, { module: 'node16' }, ['use.ts']],
      ['node20', tsc7, { module: 'node20' }, ['use.ts', 'root.ts']],
    ] as const
    for (const [name, tsc, options, files] of configs) {
      await writeFile(join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, noEmit: true, ...options }, files }))
      const { stdout } = await promisify(execFile)(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir }).catch((error: { stdout: string }) => ({ stdout: error.stdout }))
      expect([name, stdout]).toEqual([name, ''])
    }
  }, 120_000)

  it('type-checks options read from environment variables, possibly undefined, under exactOptionalPropertyTypes (@tsconfig/strictest)', async () => {
    // There `dataDir?: string` refuses a `string | undefined`: each option the library reads as
    // "not given" when undefined says so, as the client's options do.
    const dir = await createTypeScriptProject('strictest-consumer', 'module')
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, exactOptionalPropertyTypes: true, noEmit: true } }))
    await writeFile(join(dir, 'use.ts'), [
      "import { createSandbox, listenSandbox, createSandboxClient, runScenarios, loadScenarios, signWebhook, verifyWebhook, constructWebhookEvent, verifyReceiver, startWebhookListener } from 'partner-sandbox'",
      "const env = (name: string): string | undefined => process.env[name]",
      "const number = (name: string): number | undefined => env(name) === undefined ? undefined : Number(env(name))",
      "const sandbox = await createSandbox({ storage: env('STORAGE') === 'fs' ? 'fs' : undefined, dataDir: env('DATA_DIR'), keysFile: env('KEYS_FILE'), webhookForwardTo: env('RECEIVER_URL'), webhookForwardSecret: env('RECEIVER_SECRET'), webhookTimeoutMs: number('WEBHOOK_TIMEOUT_MS') })",
      "const listener = await listenSandbox(sandbox, { port: number('PORT'), host: env('HOST'), closeTimeoutMs: number('CLOSE_TIMEOUT_MS'), timeouts: { headersMs: number('HEADERS_TIMEOUT_MS') } })",
      "createSandboxClient({ baseUrl: listener.url, apiKey: env('SANDBOX_API_KEY'), retries: number('RETRIES') })",
      "await runScenarios(await loadScenarios(), { baseUrl: env('BASE_URL'), apiKey: env('SANDBOX_API_KEY'), receiverPort: number('RECEIVER_PORT'), receiverUrl: env('RECEIVER_PUBLIC_URL') })",
      "const body = '{}'",
      "const { headers } = signWebhook({ secret: 'whsec_strictest_0001', body, eventId: 'evt_1', eventType: 'sandbox.webhook.test', timestamp: number('NOW') })",
      "verifyWebhook({ secret: 'whsec_strictest_0001', body, headers, toleranceSeconds: number('TOLERANCE'), now: number('NOW') })",
      "constructWebhookEvent({ secret: 'whsec_strictest_0001', body, headers, toleranceSeconds: number('TOLERANCE'), now: number('NOW') })",
      "const receiver = await startWebhookListener({ port: 0, host: env('HOST'), secret: env('SANDBOX_WEBHOOK_SECRET'), respondStatus: number('RESPOND_STATUS'), forwardTo: env('FORWARD_TO'), timeouts: { headersMs: number('HEADERS_TIMEOUT_MS') } })",
      "await verifyReceiver({ url: receiver.url, secret: 'whsec_strictest_0001', timeoutMs: number('TIMEOUT_MS') })",
      'await receiver.close()',
      'await sandbox.close()',
    ].join('\n'))
    const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir }).catch((error: { stdout: string }) => ({ stdout: error.stdout }))
    expect(stdout).toBe('')
  }, 120_000)

  it('type-checks in a TypeScript project with the compiler\'s defaults (no skipLibCheck), the README\'s examples included', async () => {
    // The declarations are read whole: one that imported h3's or unstorage's put their own
    // errors (lib ESNext, optional drivers' packages) into every importer's build.
    const dir = await createTypeScriptProject('ts-consumer', 'module')
    // The README's test file imports vitest, which a project that runs it has installed.
    await symlink(join(ROOT, 'node_modules/vitest'), join(dir, 'node_modules/vitest'), 'dir')
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, noEmit: true } }))
    await writeFile(join(dir, 'use.ts'), [
      "import { createSandbox, listenSandbox, createSandboxClient, constructWebhookEvent, readRequestLog, type Sandbox } from 'partner-sandbox'",
      "import { createSandboxClient as createClient, SandboxApiError, ErrorCodes, type Loan } from 'partner-sandbox/client'",
      "import { verifyWebhook, constructWebhookEvent as parseEvent, type SandboxWebhookEvent } from 'partner-sandbox/webhooks'",
      'export async function callOnly(body: string, headers: Record<string, string>): Promise<string | undefined> {',
      "  const client = createClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'sk_sandbox_consumer_key_0001' })",
      "  verifyWebhook({ secret: 'whsec_consumer_secret_0001', body, headers })",
      "  const event: SandboxWebhookEvent = parseEvent({ secret: 'whsec_consumer_secret_0001', body, headers })",
      '  try {',
      '    const loans: Loan[] = (await client.listLoans()).activeLoans',
      "    return loans[0]?.id ?? event.id",
      '  } catch (error) {',
      '    return error instanceof SandboxApiError && error.status === ErrorCodes.SANDBOX_RATE_LIMIT_EXCEEDED ? error.requestId ?? undefined : undefined',
      '  }',
      '}',
      'export async function walk(body: string, headers: Record<string, string>): Promise<number> {',
      "  const sandbox: Sandbox = await createSandbox({ storage: 'memory' })",
      '  const listener = await listenSandbox(sandbox)',
      "  const client = createSandboxClient({ baseUrl: listener.url, apiKey: 'sk_sandbox_consumer_key_0001' })",
      "  const flow = await client.loanFlow({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000 })",
      "  const event = constructWebhookEvent({ secret: 'whsec_consumer_secret_0001', body, headers })",
      "  const answer = await sandbox.fetch(new Request('http://sandbox/api/sandbox/config'))",
      '  const logged = await readRequestLog(sandbox.storage, { limit: 10 })',
      '  await listener.close()',
      '  await sandbox.close()',
      "  return (flow.draft?.collateral_btc ?? 0) + answer.status + logged.length + (event.type === 'sandbox.loan.issued' ? event.data.object.debt : 0)",
      '}',
    ].join('\n'))
    // The README's examples that import the package, as a partner pastes them (the names they
    // leave to the reader's code declared).
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((match) => match[1]!).filter((code) => code.includes("from 'partner-sandbox"))
    expect(examples.length).toBeGreaterThanOrEqual(3)
    const declared = 'declare const rawBody: Buffer\ndeclare const request: { headers: Record<string, string> }\n'
    for (const [i, code] of examples.entries()) await writeFile(join(dir, `readme-${i + 1}.ts`), `${declared}${code}\nexport {}\n`)
    // The project's TypeScript 7 checks as 5.9 does, in a fifth of the time (without skipLibCheck
    // every declaration file is checked, @types/node and zod's included).
    const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir }).catch((error: { stdout: string }) => ({ stdout: error.stdout }))
    expect(stdout).toBe('')
  }, 120_000)
})
