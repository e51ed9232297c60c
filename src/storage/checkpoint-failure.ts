import { StorageError } from './storage-error.js'

/** What to do about files the server may not write: most often left by a server run as root. */
const PERMISSION_ADVICE = 'make the data dir and everything in it writable by the user serve runs as (a server once run with sudo leaves files of root\'s: chown -R them back)'

/** The system error code a failure's message names, among those this module explains. */
function findCode(error: unknown): string | undefined {
  return /\b(ENOSPC|EDQUOT|EACCES|EPERM)\b/.exec(error instanceof Error ? error.message : String(error))?.[1]
}

/**
 * A checkpoint that failed while serve runs. Requests are still answered, from the journal, so
 * nothing else told of it: a `session/` dir of root's (after a `sudo sandbox serve`) went unseen
 * until the stop, with the journal growing meanwhile, and then the next start failed.
 */
export function describeCheckpointFailure(base: string, error: unknown): StorageError {
  const code = findCode(error)
  const reason = error instanceof Error ? error.message : String(error)
  const what = code === 'EACCES' || code === 'EPERM' ? `${PERMISSION_ADVICE}; until then` : `${reason}; meanwhile`
  return new StorageError(`cannot write the files of the data dir ${base}${code ? ` (${code})` : ''}: ${what} requests are answered and kept in its journal, which grows, and which a start replays once the files can be written`, { cause: error })
}

/**
 * Why a start's replay of the journals failed, as its reader can act on it. The replay writes the
 * journals' documents to their files before it deletes them, so it needs about their size in free
 * space: a server killed as its disk filled left a journal that then stopped every start with
 * "checkpoint failed: ENOSPC", without a word about space, or that the journal was still there.
 */
export function explainReplayFailure(error: Error): string {
  const code = findCode(error)
  if (code === 'ENOSPC' || code === 'EDQUOT') return `its disk is full (${code}): free space on it and start serve again; the journal is kept, so no change is lost`
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code}): ${PERMISSION_ADVICE}, and start serve again; the journal is kept, so no change is lost`
  return error.message
}
