import { execFile } from 'node:child_process'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenTestApi } from '../helpers/api.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const ROOT = join(import.meta.dirname, '../..')
const README = await readFile(join(ROOT, 'README.md'), 'utf8')
const makeTempDir = useTempDirs('readme-client')
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the README client library example', () => {
  it('runs as the README says to run it, in a project `npm init` made (CommonJS): saved as .mjs, with node and the key it gives', async () => {
    // Pasted into client.ts or client.js there, it failed: tsx refused its top-level await in CommonJS
    // output, node its import statement; and the README had not said how to run it at all.
    const prose = README.replace(/\s+/g, ' ')
    const how = /save this as `client\.mts` and run it with `SANDBOX_API_KEY=(sk_sandbox_\w+) npx tsx client\.mts` \(or as `client\.mjs` with `node`/.exec(prose)
    expect(how, 'the README says how to save and run the example').not.toBeNull()
    const start = README.indexOf("```ts\nimport { createSandboxClient, SandboxApiError } from 'partner-sandbox/client'")
    expect(start).toBeGreaterThan(-1)
    const block = README.slice(start + 6, README.indexOf('\n```', start + 6))

    const sandbox = await createSandbox({ storage: 'memory', logError: () => {} })
    const listener = await listenTestApi(sandbox)
    cleanups.push(async () => { await listener.close(); await sandbox.close() })
    const dir = await makeTempDir()
    await mkdir(join(dir, 'node_modules'))
    await symlink(ROOT, join(dir, 'node_modules/partner-sandbox'), 'dir')
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'partner-app', version: '1.0.0', type: 'commonjs' }))
    // Only the server's address differs from the README's 127.0.0.1:4010.
    await writeFile(join(dir, 'client.mjs'), block.replace('http://127.0.0.1:4010', listener.url))
    const env = { ...process.env, SANDBOX_API_KEY: how![1]! }
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['client.mjs'], { cwd: dir, env })
    // What the README's comment says it logs: the out-of-order payout refused.
    expect([stdout, stderr]).toEqual([expect.stringMatching(/^409 FLOW_CONFLICT STEP_OUT_OF_ORDER req_\w+\n$/), ''])
  }, 60_000)
})
