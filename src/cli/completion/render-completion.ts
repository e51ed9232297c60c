import type { CommandSpec } from './command-tree.js'
import { renderBash } from './render-bash.js'
import { renderFish } from './render-fish.js'
import { renderZsh } from './render-zsh.js'

/** The shells a completion script is written for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const
/** One of SHELLS. */
export type Shell = (typeof SHELLS)[number]

/** The completion script of TREE for SHELL. */
export function renderCompletion(shell: Shell, tree: CommandSpec): string {
  if (shell === 'bash') return renderBash(tree)
  if (shell === 'zsh') return renderZsh(tree)
  return renderFish(tree)
}
