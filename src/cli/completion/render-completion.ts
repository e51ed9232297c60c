import type { CommandSpec } from './command-tree.js'
import { renderBash } from './render-bash.js'
import { renderFish } from './render-fish.js'
import { renderZsh } from './render-zsh.js'

/** The completion script of TREE for SHELL. */
export function renderCompletion(shell: 'bash' | 'zsh' | 'fish', tree: CommandSpec): string {
  if (shell === 'bash') return renderBash(tree)
  if (shell === 'zsh') return renderZsh(tree)
  return renderFish(tree)
}
