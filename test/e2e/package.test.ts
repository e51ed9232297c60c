import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')

describe('the published package', () => {
  it('holds only modules built from the current src/, and what the CLI needs at run time', async () => {
    // A module left in dist/ by an earlier build would be published, and may not even load.
    const built = (await readdir(join(ROOT, 'dist'), { recursive: true })).filter((file) => file.endsWith('.js'))
    const orphans = built.filter((file) => !existsSync(join(ROOT, 'src', file.replace(/\.js$/, '.ts'))))
    expect(orphans).toEqual([])

    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    // npm keeps its cache and logs under HOME, which a runner may not let it write (docker --user
    // with HOME=/): a cache of its own, and no update check, which would go to the registry.
    const cache = await mkdtemp(join(tmpdir(), 'sandbox-npm-cache-'))
    onTestFinished(() => rm(cache, { recursive: true, force: true }))
    const env = { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' }
    const { stdout } = await promisify(execFile)(npm, ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], { cwd: ROOT, env })
    const files: string[] = JSON.parse(stdout)[0].files.map((file: { path: string }) => file.path)
    for (const needed of ['bin/sandbox.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'dist/openapi.json', 'dist/scenario.schema.json', 'fixtures/config.json', 'fixtures/receivers/receiver.mjs', 'scenarios/loan-flow.json', 'README.md']) {
      expect(files, needed).toContain(needed)
    }
    expect(files.filter((file) => file.startsWith('test/') || file.startsWith('src/') || file.endsWith('.map'))).toEqual([])
    // Each module and its types, and the two JSON documents (openapi.json, scenario.schema.json).
    expect(files.filter((file) => file.startsWith('dist/')).length).toBe(built.length * 2 + 2)
  }, 60_000)

  it('loads by its name from an ES module and from CommonJS (require of the ESM build, Node >= 20.19)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-consumer-'))
    try {
      await mkdir(join(dir, 'node_modules'))
      await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
      await writeFile(join(dir, 'package.json'), '{"type":"commonjs"}')
      await writeFile(join(dir, 'use.cjs'), "const lib = require('partner-sandbox'); console.log(typeof lib.createSandbox, typeof lib.listenSandbox, typeof lib.createSandboxClient)")
      await writeFile(join(dir, 'use.mjs'), "import { createSandbox, listenSandbox, createSandboxClient } from 'partner-sandbox'; console.log(typeof createSandbox, typeof listenSandbox, typeof createSandboxClient)")
      for (const file of ['use.cjs', 'use.mjs']) {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [file], { cwd: dir })
        expect([file, stdout, stderr]).toEqual([file, 'function function function\n', ''])
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('type-checks in a TypeScript project with the compiler\'s defaults (no skipLibCheck), under TypeScript 5 and 7', async () => {
    // The declarations are read whole: one that imported h3's or unstorage's put their own
    // errors (lib ESNext, optional drivers' packages) into every importer's build.
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-ts-consumer-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, 'node_modules/@types'), { recursive: true })
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    await symlink(join(ROOT, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir')
    await writeFile(join(dir, 'package.json'), '{"type":"module"}')
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, noEmit: true } }))
    await writeFile(join(dir, 'use.ts'), [
      "import { createSandbox, listenSandbox, createSandboxClient, constructWebhookEvent, readRequestLog, type Sandbox } from 'partner-sandbox'",
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
    const compilers = [join(ROOT, 'node_modules/.bin/tsc'), join(ROOT, 'test/client-gen/node_modules/.bin/tsc')]
    expect(existsSync(compilers[1]!), 'run npm test (pretest installs test/client-gen, with TypeScript 5)').toBe(true)
    for (const tsc of compilers) {
      const { stdout } = await promisify(execFile)(tsc, ['-p', dir], { cwd: dir }).catch((error: { stdout: string }) => ({ stdout: error.stdout }))
      expect(stdout, tsc).toBe('')
    }
  }, 120_000)
})
