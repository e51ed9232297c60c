import { execFile, spawnSync } from 'node:child_process'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * Whether SHELL is on the PATH. bash always is; zsh and fish may not be (CI does not install them):
 * their tests skip, unless SANDBOX_TEST_SHELLS=required, which makes a missing one an error.
 */
export function hasShell(shell: 'zsh' | 'fish'): boolean {
  const found = spawnSync(shell, ['-c', 'exit 0']).status === 0
  if (!found && process.env.SANDBOX_TEST_SHELLS === 'required') throw new Error(`SANDBOX_TEST_SHELLS=required but ${shell} is not on the PATH`)
  return found
}

/**
 * The candidates bash's completion function of SCRIPT (a file) puts in COMPREPLY for WORDS, the
 * cursor at the end of the last word, run in CWD: bash's programmable-completion contract.
 */
export async function completeBash(script: string, words: string[], cwd: string): Promise<string[]> {
  const program = 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _sandbox; printf "%s\\n" "${COMPREPLY[@]}"'
  const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', program, script, ...words], { cwd })
  return stdout.split('\n').filter((line) => line !== '')
}

/** The candidates zsh offers for LINE (typed, then TAB) with SCRIPT sourced after compinit, in CWD. */
export async function completeZsh(script: string, line: string, cwd: string, out: string): Promise<string[]> {
  await rm(out, { force: true })
  await run('zsh', ['-f', join(import.meta.dirname, 'zsh-complete.zsh'), script, out, line], { cwd, timeout: 30_000 })
  const lines = (await readFile(out, 'utf8')).split('\n')
  if (!lines.includes('END')) throw new Error(`zsh did not finish completing ${JSON.stringify(line)}`)
  return [...new Set(lines.filter((entry) => entry !== '' && entry !== 'END'))]
}

/** What fish's `complete -C LINE` prints with SCRIPT sourced, in CWD: [candidate, description] pairs. */
export async function completeFish(script: string, line: string, cwd: string): Promise<[string, string][]> {
  const { stdout } = await run('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', script, line], { cwd })
  return stdout.split('\n').filter((entry) => entry !== '').map((entry) => {
    const [candidate, description = ''] = entry.split('\t')
    return [candidate!, description]
  })
}
