import { createHmac } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli, killAll, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-inputs')

const BOM = Buffer.from([0xef, 0xbb, 0xbf])
/** What Notepad on Windows saves: a byte order mark, CRLF line ends. */
const asWindows = (text: string) => Buffer.concat([BOM, Buffer.from(text.replaceAll('\n', '\r\n'))])
/** A folder name partners have: spaces, URL-special characters and non-ASCII. */
const REPO = join(import.meta.dirname, '../..')
const AWKWARD = 'Partner Projects #1 %41 ?q é 日本'

describe('input files written on other machines, in awkward folders', () => {
  it('serve reads a --config and --keys saved by a Windows editor, in a folder with spaces, #, %, é and 日本', async () => {
    const dir = join(await tempDir(), AWKWARD)
    await mkdir(dir)
    const keys = join(dir, 'keys.json')
    const created = await runCli(['keys', 'create', '--keys', keys, '--label', 'ci'])
    expect(created.code).toBe(0)
    const key = /sk_sandbox_\w+/.exec(created.stdout)![0]
    await writeFile(keys, asWindows(await readFile(keys, 'utf8')))
    const config = join(dir, 'config.json')
    await writeFile(config, asWindows('{\n\t"rates": {\n\t\t"btc_usd": 61234\n\t}\n}\n'))
    const serve = await startServe(['--port', '0', '--quiet', '--config', config, '--keys', keys, '--data-dir', join(dir, 'data')])
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })
    expect(answer.status).toBe(200)
    expect(JSON.stringify(await answer.json())).toContain('61234')
    expect(await serve.stop()).toBe(0)
    // sandbox keys reads (and rewrites) the same file.
    expect((await runCli(['keys', 'list', '--keys', keys])).stdout).toContain(' ci ')
  })

  it('refuses a path variable that ends in the \\r of a .env saved with CRLF (exit 2), rather than use another path', async () => {
    // `set -a; . ./.env` in Git Bash, WSL or a CI job, with the .env saved on Windows.
    const dir = await tempDir()
    const cases: Array<{ args: string[]; env: Record<string, string> }> = [
      { args: ['keys', 'create'], env: { SANDBOX_KEYS_FILE: 'keys.json\r' } },
      { args: ['logs'], env: { SANDBOX_DATA_DIR: '.sandbox\r' } },
      { args: ['serve', '--port', '0', '--storage', 'memory'], env: { SANDBOX_FAULTS: 'faults.json\r' } },
      { args: ['serve', '--port', '0', '--storage', 'memory'], env: { SANDBOX_TLS_CERT: 'cert.pem\r', SANDBOX_TLS_KEY: 'key.pem' } },
    ]
    for (const { args, env } of cases) {
      const name = Object.keys(env)[0]!
      const result = await runCli(args, { env, cwd: dir })
      expect([result.code, result.stdout, result.stderr], name).toEqual([2, '', `sandbox: ${name} holds a line break (${JSON.stringify(Object.values(env)[0])}), which no path has: a .env file saved with CRLF line ends? Save it with LF line ends\n`])
    }
    expect(await readdir(dir)).toEqual([])
  })

  it('serve names the --config file and the line and column of a mistake in it, CRLF and BOM or not', async () => {
    const dir = await tempDir()
    const write = async (name: string, bytes: Buffer) => {
      await writeFile(join(dir, name), bytes)
      return join(dir, name)
    }
    const cases: Array<[string, string]> = [
      [await write('comma.json', asWindows('{\n  "rates": {\n    "btc_usd": 60000,\n  }\n}\n')), ': not valid JSON (line 3, column 21): a comma before }; JSON allows no trailing comma'],
      [await write('utf16.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"rates": {}}', 'utf16le')])), ': is UTF-16, not UTF-8; save it as UTF-8 (in most editors: "Save with encoding" or the encoding in the status bar)'],
      [await write('empty.json', Buffer.alloc(0)), ': is empty'],
    ]
    for (const [file, message] of cases) {
      expect(await runCli(['serve', '--port', '0', '--storage', 'memory', '--config', file])).toMatchObject({ code: 2, stdout: '', stderr: `sandbox: --config ${file}${message}\n` })
    }
    expect(await runCli(['serve', '--port', '0', '--storage', 'memory', '--config', dir])).toMatchObject({ code: 2, stderr: `sandbox: cannot read --config ${dir}: it is a directory, not a file\n` })
  })

  it('puts --flag=~/path (which no shell expands) in the home directory, not in a folder named ~', async () => {
    const home = join(await tempDir(), 'home é')
    const cwd = await tempDir()
    await mkdir(home)
    const env = { HOME: home, USERPROFILE: home }
    const created = await runCli(['keys', 'create', '--keys=~/keys.json'], { env, cwd })
    expect(created).toMatchObject({ code: 0, stderr: expect.stringContaining(`added to ${join(home, 'keys.json')}; use it with: sandbox serve --keys ${join(home, 'keys.json')}`) })
    expect(await readdir(cwd)).toEqual([])
    expect((await runCli(['keys', 'list'], { env: { ...env, SANDBOX_KEYS_FILE: '~/keys.json' }, cwd })).stdout).toMatch(/^sk_sandbox_/m)
    const serve = await startServe(['--port', '0', '--quiet', '--keys=~/keys.json', '--data-dir=~/data'], { env })
    expect(serve.output()).toContain(`(storage fs ${join(home, 'data')}, keys ${join(home, 'keys.json')}, `)
    expect(await serve.stop()).toBe(0)
    expect((await runCli(['openapi', '--output=~/api/openapi.json'], { env, cwd })).code).toBe(0)
    expect((await readdir(home)).sort()).toEqual(['api', 'data', 'keys.json'])
    expect(await readdir(cwd)).toEqual([])
  })

  it('webhook sign signs the exact bytes of a UTF-8 body, and refuses one curl would send differently from what it signed', async () => {
    const secret = 'whsec_inputs_test'
    const event = '{"id": "evt_1", "type": "partner.updated",\r\n "data": {"name": "Café 日本"}}\r\n'
    const signed = await runCli(['webhook', 'sign', '--secret', secret, '--timestamp', '1700000000', '--json'], { input: Buffer.from(event) })
    expect(signed.code).toBe(0)
    const hmac = createHmac('sha256', secret).update(Buffer.concat([Buffer.from('1700000000.'), Buffer.from(event)])).digest('hex')
    expect(JSON.parse(signed.stdout)['x-service-webhook-signature']).toBe(`v1=${hmac}`)
    const refused: Array<[Buffer, string]> = [
      // "Café" saved as Windows-1252: it was read as U+FFFD and signed so, and no receiver could match.
      [Buffer.from(event, 'latin1'), 'the body on standard input is not valid UTF-8 (line 2, column 23: a character of another code page, such as Windows-1252?); save it as UTF-8'],
      [Buffer.concat([BOM, Buffer.from(event)]), 'the body on standard input starts with a UTF-8 byte order mark (Notepad adds one): curl would send it and a receiver\'s JSON parser refuses it; save the file as UTF-8 without a BOM\n'],
      [Buffer.from('{"id": "evt_1",\r\n "type": x}'), 'the body on standard input is not valid JSON (line 2, column 10): Unexpected token \'x\'; sign the exact event body you will send\n'],
    ]
    for (const [input, message] of refused) {
      const { code, stdout, stderr } = await runCli(['webhook', 'sign', '--secret', secret], { input })
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
      expect(stderr).toContain(`sandbox: ${message}`)
    }
  })

  it('runs from an install folder with spaces, #, %, ? and non-ASCII (file URLs of its own files stay right)', async () => {
    // The package finds fixtures, scenarios and package.json from import.meta.url: a path taken
    // from a URL without fileURLToPath would keep %23 for # and %25 for %, and find nothing.
    const root = join(await tempDir(), 'tools #1 %41 ?q é 日本', 'partner-sandbox')
    await mkdir(root, { recursive: true })
    for (const part of ['bin', 'dist', 'fixtures', 'scenarios', 'package.json']) await cp(join(REPO, part), join(root, part), { recursive: true })
    await symlink(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir')
    const bin = join(root, 'bin', 'sandbox.js')
    const version = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })
    expect(version.stdout).toBe(`${JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')).version}\n`)
    const run = spawnSync(process.execPath, [bin, 'run', 'direct-loan'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect([run.status, run.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
  })

  it('run refuses a directory or a link loop given as a scenario file with exit 2 and what to do, not a stack', async () => {
    const dir = join(await tempDir(), 'folder.json')
    await mkdir(dir)
    const { code, stdout, stderr } = await runCli(['run', dir])
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `sandbox: ${dir}: it is a directory, not a file (a directory of scenarios goes to --dir)\n` })
    const loop = join(dir, 'loop.json')
    await symlink('loop.json', loop)
    expect(await runCli(['run', loop])).toEqual({ code: 2, stdout: '', stderr: `sandbox: ${loop}: cannot be read: a symbolic link loop\n` })
  })
})
