import { rename } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * The waits between tries of a rename that Windows says is blocked by a file in use (~2 s in
 * all). An antivirus scanner, the search indexer or a backup tool opens a file as soon as it is
 * written and closed (the temp file) or while it is read (the target), and meanwhile a rename of
 * it fails with EPERM, EACCES or EBUSY; it lets go within milliseconds as a rule. graceful-fs
 * (npm's own writes) retries the same codes on Windows, for up to 60 s.
 */
export const RENAME_RETRY_DELAYS_MS: readonly number[] = [10, 20, 40, 80, 150, 250, 400, 500, 500]

/** The codes of a rename that another process's hold on either file can cause on Windows. */
export const HELD_RENAME_CODES: readonly string[] = ['EPERM', 'EACCES', 'EBUSY']

/**
 * Whether a failed rename is worth trying again: only on Windows, where these codes are what a
 * reader holding either file gives. Elsewhere they mean a real permission problem, said at once.
 */
export function isTransientRenameError(error: unknown, platform: NodeJS.Platform): boolean {
  return platform === 'win32' && HELD_RENAME_CODES.includes((error as NodeJS.ErrnoException).code ?? '')
}

/** What renameReplacing may be given instead of the real system (tests emulate Windows with it). */
export interface RenameOptions {
  platform?: NodeJS.Platform
  rename?: (from: string, to: string) => Promise<void>
}

/**
 * Renames FROM over TO, trying again for a while where Windows reports either file as held by
 * another process. Safe to repeat: a rename that failed changed nothing.
 */
export async function renameReplacing(from: string, to: string, options: RenameOptions = {}): Promise<void> {
  const platform = options.platform ?? process.platform
  const move = options.rename ?? rename
  for (let attempt = 0; ; attempt++) {
    try {
      return await move(from, to)
    } catch (error) {
      if (attempt >= RENAME_RETRY_DELAYS_MS.length || !isTransientRenameError(error, platform)) throw error
      await sleep(RENAME_RETRY_DELAYS_MS[attempt])
    }
  }
}
