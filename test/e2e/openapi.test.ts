import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const run = promisify(execFile)
afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-openapi')
const ROOT = join(import.meta.dirname, '../..')
const CLIENT_DIR = join(ROOT, 'test/client-gen')
const DIST_DOC = join(ROOT, 'dist/openapi.json')

describe('the OpenAPI document as a user gets it', () => {
  it('serve answers it without a key, as dist/openapi.json and `sandbox openapi` but naming itself as the server', async () => {
    const server = await startServe(['--port', '0', '--storage', 'memory'])
    const answer = await fetch(new URL('/api/sandbox/openapi.json', server.url))
    expect(answer.status).toBe(200)
    const { servers, ...served } = await answer.json()
    // A tool importing the served URL (Postman, a mock, a client's base URL) must call this server.
    expect(servers).toEqual([{ url: server.url, description: 'the sandbox that served this document' }])
    const { servers: shipped, ...dist } = JSON.parse(await readFile(DIST_DOC, 'utf8'))
    expect(shipped).toEqual([{ url: 'http://127.0.0.1:4010', description: 'sandbox serve (default port)' }])
    expect(served).toEqual(dist)
    const printed = await runCli(['openapi'])
    expect(JSON.parse(printed.stdout)).toEqual({ servers: shipped, ...dist })
    expect(served.info.title).toBe('Partner API sandbox')
    await server.stop()
  })

  it('--output writes the document, creating its directory; a path it cannot write is one line and exit 2', async () => {
    const dir = await tempDir()
    const output = join(dir, 'docs/openapi.json')
    expect((await runCli(['openapi', '--output', output])).code).toBe(0)
    expect(JSON.parse(await readFile(output, 'utf8'))).toEqual(JSON.parse(await readFile(DIST_DOC, 'utf8')))

    await writeFile(join(dir, 'afile'), '')
    const blocked = join(dir, 'afile/openapi.json')
    const { code, stdout, stderr } = await runCli(['openapi', '--output', blocked])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`sandbox: cannot write the OpenAPI document to ${blocked}: ${join(dir, 'afile')} is a file, not a directory\n`)
  })

  it('generates a client with openapi-typescript + openapi-fetch that type-checks, with precise types', async () => {
    // test/client-gen holds the generator; `npm test` installs it (pretest) on a fresh clone.
    expect(existsSync(join(CLIENT_DIR, 'node_modules/.bin/openapi-typescript')), 'run npm test (pretest installs test/client-gen)').toBe(true)
    await rm(join(CLIENT_DIR, 'generated'), { recursive: true, force: true })
    await run(join(CLIENT_DIR, 'node_modules/.bin/openapi-typescript'), [DIST_DOC, '-o', join(CLIENT_DIR, 'generated/api.ts')], { cwd: CLIENT_DIR })
    const tsc = join(ROOT, 'node_modules/.bin/tsc')
    await run(tsc, ['-p', join(CLIENT_DIR, 'tsconfig.json')], { cwd: CLIENT_DIR })
    // A typo and a wrong action must be caught: the types are not `any`.
    const bad = await run(tsc, ['-p', join(CLIENT_DIR, 'tsconfig.bad.json')], { cwd: CLIENT_DIR }).then(() => '', (error: { stdout: string }) => error.stdout)
    expect(bad).toContain("Property 'debtt' does not exist")
    expect(bad).toContain('"fly_to_the_moon"')
    // A webhook body's data.object is the object that event carries (a loan here), not unknown.
    expect(bad).toContain(`Property 'collateral_btc' does not exist on type '{ id: string; status: "active" | "closed" | "liquidated";`)
  }, 60_000)

  it('the README\'s openapi-fetch example type-checks as pasted beside the file its openapi-typescript line writes, in an ES module project on NodeNext', async () => {
    expect(existsSync(join(CLIENT_DIR, 'node_modules/.bin/openapi-typescript')), 'run npm test (pretest installs test/client-gen)').toBe(true)
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const generate = /^npx openapi-typescript \S+ -o (\S+)$/m.exec(readme)
    const usage = /```ts\n(import createClient from 'openapi-fetch'\n[\s\S]*?)\n```/.exec(readme)
    expect(generate, 'the openapi-typescript line').not.toBeNull()
    expect(usage, 'the openapi-fetch block').not.toBeNull()
    // generated/ is git-ignored; the block's only free name is the key.
    const dir = join(CLIENT_DIR, 'generated/readme')
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir, { recursive: true })
    await run(join(CLIENT_DIR, 'node_modules/.bin/openapi-typescript'), [DIST_DOC, '-o', join(dir, generate![1]!)], { cwd: CLIENT_DIR })
    await writeFile(join(dir, 'usage.ts'), `declare const key: string\n${usage![1]}\n`)
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../../tsconfig.json', files: ['usage.ts', generate![1]] }))
    const checked = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], { cwd: CLIENT_DIR }).then(() => '', (error: { stdout: string }) => error.stdout)
    expect(checked).toBe('')
  }, 60_000)
})
