import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { renderBash } from '../../src/cli/completion/render-bash.js'
import { renderFish } from '../../src/cli/completion/render-fish.js'
import { renderZsh } from '../../src/cli/completion/render-zsh.js'
import { EVENT_TYPES } from '../../src/webhooks/types.js'

/** Event types in both spellings the commands take: `sandbox.loan.issued` and `loan.issued`. */
const EVENT_WORDS = [...EVENT_TYPES, ...EVENT_TYPES.map((type) => type.slice('sandbox.'.length))]
import { killAll, runCli } from '../helpers/cli.js'
import { NASTY, SMALL_TREE } from '../helpers/completion-tree.js'
import { completeBash, completeFish, completeZsh, hasShell } from '../helpers/shell-complete.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const run = promisify(execFile)
afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-completion')
const hasZsh = hasShell('zsh')
const hasFish = hasShell('fish')
const TOP = ['serve', 'run', 'logs', 'openapi', 'completion', 'webhook', 'keys', 'help']
const SHELL_TIMEOUT_MS = 120_000

/** A temp dir with the CLI's script for SHELL, the SMALL_TREE one, and files to complete. */
async function prepare(shell: 'bash' | 'zsh' | 'fish'): Promise<{ dir: string; script: string; small: string }> {
  const dir = await tempDir()
  const printed = await runCli(['completion', shell])
  expect(printed.code, printed.stderr).toBe(0)
  const script = join(dir, `sandbox.${shell}`)
  await writeFile(script, printed.stdout)
  const small = join(dir, `small.${shell}`)
  await writeFile(small, { bash: renderBash, zsh: renderZsh, fish: renderFish }[shell](SMALL_TREE))
  await mkdir(join(dir, 'work/scenarios'), { recursive: true })
  await writeFile(join(dir, 'work/config.json'), '{}')
  await writeFile(join(dir, 'work/my faults.json'), '{}')
  return { dir, script, small }
}

describe('sandbox completion bash, in a real bash', () => {
  let dir: string
  let script: string
  let small: string
  const complete = (...words: string[]) => completeBash(script, ['sandbox', ...words], join(dir, 'work'))
  beforeAll(async () => ({ dir, script, small } = await prepare('bash')))

  it('completes commands, a group\'s subcommands, and a command\'s options after --', async () => {
    expect(await complete('')).toEqual(TOP)
    expect(await complete('webhook', 'tr')).toEqual(['trigger'])
    expect(await complete('keys', '')).toEqual(['create', 'list', 'revoke', 'reset', 'help'])
    expect(await complete('help', 'we')).toEqual(['webhook'])
    const options = await complete('webhook', 'register', '--')
    expect(options).toEqual(expect.arrayContaining(['--events', '--rotate-secret', '--base-url', '--api-key', '--timeout', '--verbose', '--json', '--help']))
    expect(options.every((option) => option.startsWith('--'))).toBe(true)
    expect(await complete('-')).toEqual(['-v', '--version', '-h', '--help'])
  })

  it('completes known values: --storage, --rate-limit, event types, --events lists, --status', async () => {
    expect(await complete('serve', '--storage', '')).toEqual(['fs', 'memory', 'redis://'])
    expect(await complete('serve', '--storage', '=', 'm')).toEqual(['memory'])
    expect(await complete('logs', '--storage', '')).toEqual(['fs', 'redis://'])
    expect(await complete('serve', '--rate-limit', '')).toEqual(['off'])
    expect(await complete('webhook', 'trigger', '')).toEqual(EVENT_WORDS)
    // The short spelling serve's banner and the README use.
    expect(await complete('webhook', 'trigger', 'loan.i')).toEqual(['loan.issued'])
    expect(await complete('webhook', 'register', 'https://x.test/hook', '--events', 'webhook.test,loan.is')).toEqual(['webhook.test,loan.issued'])
    expect(await complete('webhook', 'trigger', '--json', 'sandbox.loan.i')).toEqual(['sandbox.loan.issued'])
    expect(await complete('webhook', 'register', 'https://x.test/hook', '--events', 'sandbox.webhook.test,sandbox.loan.is')).toEqual(['sandbox.webhook.test,sandbox.loan.issued'])
    expect(await complete('webhook', 'deliveries', '--status', 'pending', '--status', 'f')).toEqual(['failed'])
    expect(await complete('completion', '')).toEqual(['bash', 'zsh', 'fish'])
  })

  it('completes the shipped scenarios\' ids beside scenario files, and their tags for --tag', async () => {
    expect(await complete('run', 'loan-')).toEqual(['loan-flow'])
    expect(await complete('run', '--bail', 'repay-')).toEqual(['repay-full', 'repay-interest', 'repay-partial-principal'])
    const both = await complete('run', '')
    expect(both).toEqual(expect.arrayContaining(['loan-flow', 'webhook-test-event', 'config.json', 'scenarios']))
    expect(await complete('run', '--tag', 'sm')).toEqual(['smoke'])
    expect(await complete('run', '--tag', 'smoke', '--tag', 'local-')).toEqual(['local-only'])
  })

  it('completes paths for file and directory options and run\'s scenarios, and nothing for a free value', async () => {
    expect((await complete('serve', '--config', '')).sort()).toEqual(['config.json', 'my faults.json', 'scenarios'])
    expect(await complete('serve', '--faults', 'my')).toEqual(['my faults.json'])
    expect(await complete('serve', '--data-dir', '')).toEqual(['scenarios'])
    expect((await complete('run', '--bail', 'c'))).toEqual(['config.json'])
    expect(await complete('run', 'config.json', 'sc')).toEqual(['scenarios'])
    expect(await complete('serve', '--port', '')).toEqual([])
    expect(await complete('webhook', 'register', '')).toEqual([])
    // An optional value: the next word would be taken as it (`--wait loan.issued`), so no event is offered.
    expect(await complete('webhook', 'trigger', '--wait', '')).toEqual([])
  })

  it('goes on completing a path once a space in it is typed escaped or in quotes', async () => {
    const cwd = await tempDir()
    await mkdir(join(cwd, 'my scenarios'))
    await writeFile(join(cwd, 'my scenarios/loan one.json'), '{}')
    const at = (...words: string[]) => completeBash(script, ['sandbox', ...words], cwd)
    // What bash inserted for `sandbox run my<TAB>` is `my\ scenarios/`: the next TAB reads that word as typed.
    expect(await at('run', 'my\\ sc')).toEqual(['my scenarios'])
    expect(await at('run', 'my\\ scenarios/')).toEqual(['my scenarios/loan one.json'])
    expect(await at('run', '--dir', '"my sc')).toEqual(['my scenarios'])
    expect(await at('serve', '--faults', "'my scenarios/lo")).toEqual(['my scenarios/loan one.json'])
    // --faults=my\ scenarios/lo, which bash splits at the =.
    expect(await at('serve', '--faults', '=', 'my\\ scenarios/lo')).toEqual(['my scenarios/loan one.json'])
  })

  it('offers a value with shell metacharacters quoted, and runs none of it', async () => {
    const cwd = await tempDir()
    const candidates = await completeBash(small, ['sandbox', 'group', 'sub', '--kind', 'it'], cwd)
    expect(candidates).toHaveLength(1)
    // What the shell reads back from the inserted text is the value itself.
    const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', 'eval "set -- $0"; printf %s "$1"', candidates[0]!], { cwd })
    expect(stdout).toBe(NASTY.value)
    expect(await completeBash(small, ['sandbox', 'group', 'sub', ''], cwd)).toEqual(['one', 'two'])
    expect(existsSync(join(cwd, 'pwned'))).toBe(false)
  })
})

describe('sandbox completion without a shell named', () => {
  it('takes the shell from $SHELL, and without a known one says which exist and how to name one (exit 2)', async () => {
    expect((await runCli(['completion'], { env: { SHELL: '/usr/bin/zsh' } })).stdout.startsWith('#compdef sandbox\n')).toBe(true)
    expect((await runCli(['completion'], { env: { SHELL: '/usr/local/bin/fish' } })).stdout).toContain('complete -c sandbox')
    const unknown = await runCli(['completion'], { env: { SHELL: '/bin/tcsh' } })
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toBe('sandbox: SHELL is /bin/tcsh, which is none of bash, zsh, fish: name the shell, e.g. sandbox completion bash\n')
    const named = await runCli(['completion', 'powershell'])
    expect(named.code).toBe(2)
    expect(named.stderr).toContain('bash, zsh, fish')
  }, SHELL_TIMEOUT_MS)
})

describe.skipIf(!hasZsh)('sandbox completion zsh, in a real zsh (skipped without zsh on the PATH; SANDBOX_TEST_SHELLS=required fails instead)', () => {
  it('parses, and completes commands, subcommands, options, values and paths; metacharacters are values', async () => {
    const { dir, script, small } = await prepare('zsh')
    await run('zsh', ['-n', script])
    const out = join(dir, 'candidates')
    const complete = (line: string, file = script) => completeZsh(file, line, join(dir, 'work'), out)
    expect(await complete('sandbox ')).toEqual(TOP)
    expect(await complete('sandbox webhook tr')).toEqual(['trigger'])
    expect(await complete('sandbox webhook register --rot')).toEqual(['--rotate-secret'])
    expect(await complete('sandbox serve --storage ')).toEqual(['fs', 'memory', 'redis://'])
    expect((await complete('sandbox webhook trigger ')).sort()).toEqual([...EVENT_WORDS].sort())
    // An item of the list: zsh keeps what is before the comma and completes after it.
    expect(await complete('sandbox webhook register x --events sandbox.webhook.test,sandbox.loan.is')).toEqual(['sandbox.loan.issued'])
    // _files adds names quoted as typed: the space escaped.
    expect((await complete('sandbox serve --config ')).sort()).toEqual(['config.json', 'my\\ faults.json', 'scenarios'])
    expect(await complete('sandbox serve --data-dir ')).toEqual(['scenarios'])
    expect(await complete('sandbox serve --port ')).toEqual([])
    expect(await complete('sandbox run loan-')).toEqual(['loan-flow'])
    expect(await complete('sandbox run --tag sm')).toEqual(['smoke'])
    // Each candidate is inserted quoted: what zsh reads back from it is the value itself.
    const inserted = await complete('sandbox group sub --kind ', small)
    const readBack = await Promise.all(inserted.map(async (text) => (await run('zsh', ['-fc', 'eval "set -- $1"; print -rn -- "$1"', 'zsh', text], { cwd: dir })).stdout))
    expect(readBack).toEqual(['plain', NASTY.value, 'redis://'])
    expect(existsSync(join(dir, 'work/pwned'))).toBe(false)
  }, SHELL_TIMEOUT_MS)
})

describe.skipIf(!hasFish)('sandbox completion fish, in a real fish (skipped without fish on the PATH; SANDBOX_TEST_SHELLS=required fails instead)', () => {
  it('parses, and completes commands, subcommands, options, values and paths; metacharacters are values', async () => {
    const { dir, script, small } = await prepare('fish')
    await run('fish', ['--no-execute', script])
    const cwd = join(dir, 'work')
    const candidates = async (line: string, file = script) => (await completeFish(file, line, cwd)).map(([candidate]) => candidate)
    expect((await candidates('sandbox ')).sort()).toEqual([...TOP].sort())
    expect(await candidates('sandbox webhook tr')).toEqual(['trigger'])
    expect(await candidates('sandbox webhook register --rot')).toEqual(['--rotate-secret'])
    expect(await candidates('sandbox serve --storage ')).toEqual(['fs', 'memory', 'redis://'])
    expect((await candidates('sandbox webhook trigger ')).sort()).toEqual([...EVENT_WORDS].sort())
    expect(await candidates('sandbox webhook register x --events sandbox.webhook.test,sandbox.loan.is')).toEqual(['sandbox.webhook.test,sandbox.loan.issued'])
    expect((await candidates('sandbox serve --config ')).sort()).toEqual(['config.json', 'my faults.json', 'scenarios/'])
    expect(await candidates('sandbox serve --data-dir ')).toEqual(['scenarios/'])
    expect(await candidates('sandbox serve --port ')).toEqual([])
    expect(await candidates('sandbox run loan-')).toEqual(['loan-flow'])
    expect(await candidates('sandbox run --tag sm')).toEqual(['smoke'])
    expect(await completeFish(small, 'sandbox group sub --kind ', cwd)).toEqual(expect.arrayContaining([[NASTY.value, NASTY.description]]))
    expect(existsSync(join(cwd, 'pwned'))).toBe(false)
  }, SHELL_TIMEOUT_MS)
})
