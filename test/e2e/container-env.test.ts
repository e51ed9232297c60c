import { chmod } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess } from '../helpers/cli.js'
import { AS_STRANGER, STRANGER_UNAVAILABLE } from '../helpers/container.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * The CLI in the process environments of containers and CI runners, reproduced directly: a user
 * with no passwd entry (`docker run --user 12345`). Needs root and util-linux; CI sets
 * SANDBOX_TEST_CONTAINER=required, so there a missing tool fails the run instead of skipping.
 */
if (process.env.SANDBOX_TEST_CONTAINER === 'required' && STRANGER_UNAVAILABLE) throw new Error(`SANDBOX_TEST_CONTAINER=required but ${STRANGER_UNAVAILABLE}`)

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-container')

/** A fresh directory the stranger may write in, as a container's working directory. */
async function openDir(): Promise<string> {
  const dir = await tempDir()
  await chmod(dir, 0o777)
  return dir
}

describe.skipIf(STRANGER_UNAVAILABLE !== '')(`as a user with no passwd entry and no HOME${STRANGER_UNAVAILABLE ? ` (skipped: ${STRANGER_UNAVAILABLE})` : ''}`, () => {
  const asStranger = { wrapper: AS_STRANGER }

  it('keys, serve and logs work on their defaults in the working directory', async () => {
    const cwd = await openDir()
    const created = await runCli(['keys', 'create', '--label', 'ci'], { ...asStranger, cwd })
    expect(created).toMatchObject({ code: 0, stderr: expect.stringContaining('added to .sandbox/keys.json') })
    const key = /sk_sandbox_\w+/.exec(created.stdout)![0]
    expect((await runCli(['keys', 'list'], { ...asStranger, cwd })).stdout).toContain(' ci ')
    const [command, ...wrapperArgs] = AS_STRANGER
    const serve = await startNodeProcess([...wrapperArgs, process.execPath, BIN, 'serve', '--port', '0', '--keys', '.sandbox/keys.json'], /sandbox ready: (\S+)/, { command, cwd })
    expect(serve.output()).toContain('storage fs .sandbox')
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })
    expect(answer.status).toBe(200)
    expect(await serve.stop()).toBe(0)
    const logs = await runCli(['logs', '--json'], { ...asStranger, cwd })
    expect(logs).toMatchObject({ code: 0, stderr: '' })
    expect(logs.stdout).toContain('"path":"/api/sandbox/config"')
  })

  it('a ~ path there is an exit-2 error that says to set HOME, not a stack', async () => {
    const cwd = await openDir()
    const expected = (path: string) => `sandbox: cannot expand ${path}: no home directory (HOME is not set, and user 12345 has no entry in the user database); set HOME or give the path without ~\n`
    expect(await runCli(['serve', '--port', '0', '--data-dir', '~/data'], { ...asStranger, cwd })).toMatchObject({ code: 2, stdout: '', stderr: expected('~/data') })
    expect(await runCli(['keys', 'list'], { ...asStranger, cwd, env: { SANDBOX_KEYS_FILE: '~/keys.json' } })).toMatchObject({ code: 2, stderr: expected('~/keys.json') })
    expect(await runCli(['run', '--json', '--junit', '~/r.xml', 'loan-flow'], { ...asStranger, cwd })).toMatchObject({ code: 2, stderr: expected('~/r.xml') })
  })
})
