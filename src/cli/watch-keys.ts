import { createInterface } from 'node:readline'

/**
 * `run --watch` on a terminal: a line typed at it, empty (Enter) or `r`, runs again; `q` quits.
 * Lines, not keypresses: the terminal stays in its normal mode, so Ctrl+C is the usual SIGINT and
 * there is no raw mode to restore on any way out. Returns what stops the reading.
 */
export function listenForWatchKeys(input: NodeJS.ReadableStream, actions: { rerun(): void; quit(): void }): () => void {
  const lines = createInterface({ input, terminal: false })
  lines.on('line', (line) => {
    const key = line.trim().toLowerCase()
    if (key === '' || key === 'r') actions.rerun()
    else if (key === 'q') actions.quit()
  })
  return () => lines.close()
}
