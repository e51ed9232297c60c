import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// The README's container healthcheck, run as docker runs it (the array's command, no shell)
// against a serve as a container starts it: every interface, registered keys only.
const README = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-readme-healthcheck')

function runHealthcheck(command: string[], port: string): Promise<number> {
  const [file, ...args] = command.map((part) => part.replaceAll('127.0.0.1:4010', `127.0.0.1:${port}`))
  expect(file).toBe('node')
  return new Promise((resolve) => execFile(process.execPath, args, { timeout: 20_000 }, (error) => resolve(error ? (typeof error.code === 'number' ? error.code : -1) : 0)))
}

describe('the README healthcheck', () => {
  it('exits 0 against serve --host 0.0.0.0 --keys, unlogged, and 1 once the server is gone', { timeout: 60_000 }, async () => {
    const line = /^ {2}test: (\[.+\])$/m.exec(README.slice(README.indexOf('**A healthcheck.**')))
    expect(line).not.toBeNull()
    const command = JSON.parse(line![1]!) as string[]
    expect(command[0]).toBe('CMD')

    const dir = await tempDir()
    const keys = join(dir, 'keys.json')
    expect((await runCli(['keys', 'create', '--keys', keys])).code).toBe(0)
    const server = await startServe(['--host', '0.0.0.0', '--port', '0', '--storage', 'memory', '--keys', keys, '--rate-limit', '1/60'])
    const port = new URL(server.url).port
    for (let check = 0; check < 3; check++) expect(await runHealthcheck(command.slice(1), port)).toBe(0)
    // What the README says does not do: the API's own paths without a key.
    expect((await fetch(`http://127.0.0.1:${port}/api/sandbox/config`)).status).toBe(401)
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404)
    const before = server.output()
    expect(before).not.toContain('openapi.json')

    expect(await server.stop()).toBe(0)
    expect(await runHealthcheck(command.slice(1), port)).toBe(1)
  })
})
