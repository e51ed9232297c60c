import { basename, dirname } from 'node:path'

/**
 * Directories (first key segments) of fs storage whose files hold what only the server's user
 * should read: webhook signing secrets (session documents, stored answers of POST
 * /api/sandbox/webhooks in `idem`, the `--webhook-forward-to` secret in `webhooks`) and partners'
 * loan state. The request log (`reqlog`) and the format marker stay readable as the umask allows:
 * `sandbox logs` reads them from another user's data dir.
 */
export const PRIVATE_NAMESPACES: readonly string[] = ['session', 'idem', 'webhooks', 'whq']

/** Mode of files only the owner reads, as the keys file has. */
export const PRIVATE_FILE_MODE = 0o600
/** Mode of other files (less the umask), Node's default. */
export const SHARED_FILE_MODE = 0o666

/** The mode a new storage file at `target` is created with. */
export function chooseFileMode(target: string): number {
  return PRIVATE_NAMESPACES.includes(basename(dirname(target))) ? PRIVATE_FILE_MODE : SHARED_FILE_MODE
}
