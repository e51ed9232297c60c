import type { CommandSpec } from './command-tree.js'
import { renderBash } from './render-bash.js'

/** The completion script of TREE for SHELL. */
export function renderCompletion(shell: 'bash' | 'zsh' | 'fish', tree: CommandSpec): string {
  if (shell === 'bash') return renderBash(tree)
  throw new Error(`no renderer for ${shell} yet`)
}
