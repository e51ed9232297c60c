import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { completeBash, completeFish, completeZsh, hasShell } from '../helpers/shell-complete.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-completion-dir')
const SHELL_TIMEOUT_MS = 120_000

/**
 * A temp dir with the CLI's script for SHELL and, in `work`, a partner's own scenarios: `mine`
 * (two scenarios, a fixture and a note) and `my dir` (a name with a space).
 */
async function prepare(shell: 'bash' | 'zsh' | 'fish'): Promise<{ dir: string; script: string; cwd: string }> {
  const dir = await tempDir()
  const printed = await runCli(['completion', shell])
  expect(printed.code, printed.stderr).toBe(0)
  const script = join(dir, `sandbox.${shell}`)
  await writeFile(script, printed.stdout)
  const cwd = join(dir, 'work')
  await mkdir(join(cwd, 'mine'), { recursive: true })
  await mkdir(join(cwd, 'my dir'))
  for (const file of ['mine/topup-then-repay.json', 'mine/repay-abandoned.json', 'mine/_fixture.json', 'mine/notes.txt', 'my dir/loan one.json']) await writeFile(join(cwd, file), '{}')
  return { dir, script, cwd }
}

describe('sandbox completion bash: run --dir DIR completes the ids in DIR, not the shipped ones', () => {
  let script: string
  let cwd: string
  const complete = (...words: string[]) => completeBash(script, ['sandbox', ...words], cwd)
  beforeAll(async () => ({ script, cwd } = await prepare('bash')))

  it('offers the ids of DIR\'s scenario files beside paths, and no shipped id', async () => {
    expect(await complete('run', '--dir', 'mine', 'repay-')).toEqual(['repay-abandoned'])
    expect(await complete('run', '--dir', 'mine', 'loan-')).toEqual([])
    expect((await complete('run', '--dir', 'mine', '')).sort()).toEqual(['mine', 'my dir', 'repay-abandoned', 'topup-then-repay'])
    // --dir=mine, which bash splits at the =, and --dir given after an id.
    expect(await complete('run', '--dir', '=', 'mine', 'top')).toEqual(['topup-then-repay'])
    expect(await complete('run', 'topup-then-repay', '--dir', 'mine', 'rep')).toEqual(['repay-abandoned'])
    // A directory typed quoted or escaped, as bash inserted it.
    expect(await complete('run', '--dir', '"my dir"', 'lo')).toEqual(['loan\\ one'])
    expect(await complete('run', '--dir', 'my\\ dir', 'lo')).toEqual(['loan\\ one'])
    // Without --dir, the shipped ones as before.
    expect(await complete('run', 'repay-')).toEqual(['repay-full', 'repay-interest', 'repay-partial-principal'])
  })

  it('offers no shipped tag for --tag once --dir is given', async () => {
    expect(await complete('run', '--dir', 'mine', '--tag', '')).toEqual([])
    expect(await complete('run', '--tag', 'sm')).toEqual(['smoke'])
  })
})

describe.skipIf(!hasShell('zsh'))('sandbox completion zsh: run --dir DIR completes the ids in DIR (skipped without zsh)', () => {
  it('offers DIR\'s ids and no shipped id or tag', async () => {
    const { dir, script, cwd } = await prepare('zsh')
    const complete = (line: string) => completeZsh(script, line, cwd, join(dir, 'candidates'))
    expect(await complete('sandbox run --dir mine repay-')).toEqual(['repay-abandoned'])
    expect(await complete('sandbox run --dir=mine top')).toEqual(['topup-then-repay'])
    // Inserted quoted as typed, the space escaped, as _files inserts a path.
    expect(await complete('sandbox run --dir my\\ dir lo')).toEqual(['loan\\ one'])
    expect(await complete('sandbox run --dir mine --tag ')).toEqual([])
    expect(await complete('sandbox run repay-f')).toEqual(['repay-full'])
  }, SHELL_TIMEOUT_MS)
})

describe.skipIf(!hasShell('fish'))('sandbox completion fish: run --dir DIR completes the ids in DIR (skipped without fish)', () => {
  it('offers DIR\'s ids and no shipped id or tag', async () => {
    const { script, cwd } = await prepare('fish')
    const candidates = async (line: string) => (await completeFish(script, line, cwd)).map(([candidate]) => candidate)
    expect(await candidates('sandbox run --dir mine repay-')).toEqual(['repay-abandoned'])
    expect(await candidates('sandbox run --dir=mine top')).toEqual(['topup-then-repay'])
    expect(await candidates("sandbox run --dir 'my dir' lo")).toEqual(['loan one'])
    expect(await candidates('sandbox run --dir mine --tag ')).toEqual([])
    expect(await candidates('sandbox run repay-f')).toEqual(['repay-full'])
  }, SHELL_TIMEOUT_MS)
})
