import { spawnSync } from 'node:child_process'
import { BIN } from './cli.js'

/**
 * Conditions of containers reproduced without a container engine (root only): a user with no
 * entry in the user database, as `docker run --user 12345` gives, and the CLI as PID 1 of its
 * own PID namespace, as a container's entrypoint.
 */

/** A UID and GID that no user database here names (probed below). */
export const STRANGER_ID = 12345

/** Runs a command as STRANGER_ID with no supplementary groups and no HOME. */
export const AS_STRANGER = ['setpriv', `--reuid=${STRANGER_ID}`, `--regid=${STRANGER_ID}`, '--clear-groups', 'env', '-u', 'HOME']

/** Runs a command as PID 1 of a new PID namespace (with its own /proc, so that pid reads 1). */
export const AS_INIT = ['unshare', '--fork', '--pid', '--mount-proc']

/** Empty when AS_STRANGER works here; otherwise why the tests that need it are skipped. */
export const STRANGER_UNAVAILABLE = probe(AS_STRANGER, 'setpriv', "try { require('node:os').userInfo() } catch { process.exit(0) } process.exit(3)", `user ${STRANGER_ID} has an entry in the user database here`)

/** Empty when AS_INIT works here; otherwise why the tests that need it are skipped. */
export const INIT_UNAVAILABLE = probe(AS_INIT, 'unshare', 'process.exit(process.pid === 1 ? 0 : 3)', 'node does not run as PID 1 under unshare')

/** Checks that the CLI runs under WRAPPER, and that SCRIPT (exit 3: not so) sees the condition. */
function probe(wrapper: string[], tool: string, script: string, notSo: string): string {
  if (process.getuid?.() !== 0) return `${tool} needs root`
  const run = (args: string[]) => spawnSync(wrapper[0]!, [...wrapper.slice(1), process.execPath, ...args], { timeout: 10_000 })
  const cli = run([BIN, '--version'])
  if (cli.error) return `no usable ${tool} (${(cli.error as NodeJS.ErrnoException).code ?? cli.error.message}); install util-linux`
  if (cli.status !== 0) return `the CLI does not run under ${tool} (exit ${cli.status}): ${cli.stderr.toString().trim()}`
  const check = run(['-e', script])
  if (check.status === 3) return notSo
  if (check.status !== 0) return `${tool} failed (exit ${check.status}): ${check.stderr.toString().trim()}`
  return ''
}
