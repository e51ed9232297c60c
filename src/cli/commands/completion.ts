import { basename } from 'node:path'
import { Argument, type Command } from 'commander'
import { CliError } from '../cli-error.js'
import { hintValues } from '../completion/value-hints.js'
import { renderCompletion, SHELLS, type Shell } from '../completion/render-completion.js'

const isShell = (name: string): name is Shell => (SHELLS as readonly string[]).includes(name)

/** The shell named, or else the one $SHELL names; a usage error saying how to name one when neither is known. */
function pickShell(name: string | undefined): Shell {
  if (name !== undefined) {
    if (isShell(name)) return name
    throw new CliError(`no completion for the shell "${name}": name one of ${SHELLS.join(', ')} (sandbox completion bash)`)
  }
  const login = basename(process.env.SHELL ?? '')
  if (isShell(login)) return login
  const found = login === '' ? 'SHELL is not set' : `SHELL is ${process.env.SHELL}`
  throw new CliError(`${found}, which is none of ${SHELLS.join(', ')}: name the shell, e.g. sandbox completion bash`)
}

async function runCompletion(name: string | undefined): Promise<void> {
  const shell = pickShell(name)
  const { createProgram } = await import('../main.js')
  const { describeCommands } = await import('../completion/describe-commands.js')
  const tree = await describeCommands(await createProgram())
  process.stdout.write(renderCompletion(shell, tree))
}

/** `sandbox completion`: prints the shell completion script, generated from the commands themselves. */
export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print the completion script for bash, zsh or fish (default the shell $SHELL names)')
    .addArgument(hintValues(new Argument('[shell]', `one of ${SHELLS.join(', ')}`), { words: SHELLS }))
    .action((name: string | undefined) => runCompletion(name))
}
