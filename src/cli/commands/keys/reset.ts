import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { Option, type Command } from 'commander'
import type { Storage } from 'unstorage'
import { addKeysFileOption, addStorageOptions, resolveKeysFile, type StorageFlags } from '../../options.js'
import { readStorageSetting } from '../../storage-setting.js'
import { resolveKeyArgument } from '../../pick-key.js'

interface ResetFlags extends StorageFlags {
  keys?: string
  drop?: boolean
}

async function runReset(key: string | undefined, flags: ResetFlags): Promise<void> {
  const { resetKeySession } = await import('../../../keys/manage-keys.js')
  const { maskApiKey } = await import('../../../keys/api-key-text.js')
  const { describeKeyStatus } = await import('../../../keys/keys-file.js')
  const { createSandboxStorage } = await import('../../../storage/create-storage.js')
  const { deleteSessionData } = await import('../../../server/delete-session.js')
  const { StorageError } = await import('../../../storage/storage-error.js')
  const path = resolveKeysFile(flags.keys)
  const { storage, dataDir, kind } = await readStorageSetting(flags)
  const query = await resolveKeyArgument(key, path, 'reset')
  // The server switches to the new session on its own; the old session's data is deleted here
  // (a data dir that does not exist holds none). The storage is opened before the keys file is
  // changed: a redis that cannot be used (down, a wrong password) must fail the reset, not leave
  // the old session's data behind under a key that has moved on.
  const store = kind !== 'memory' && (kind === 'redis' || existsSync(resolve(dataDir)))
    ? await createSandboxStorage({ kind, dataDir, url: storage, replayCrashed: true })
    : undefined
  let after: Awaited<ReturnType<typeof resetKeySession>>['after']
  try {
    // A redis that reads but refuses deletes (a read-only replica, one that stopped writes after
    // a failed snapshot, an ACL user without DEL) failed the deletion below only once the keys
    // file had moved on, leaving the old session's data behind: a delete of a key no session has
    // finds it first.
    if (store) await checkCanDelete(store)
    const reset = await resetKeySession(path, query, { drop: flags.drop })
    after = reset.after
    const old = reset.before.session_id
    // Past the keys file's change, a failure (a dropped connection) must not read as a reset that
    // did not happen: run again, it would reset anew and leave this session's data for good.
    if (store && old) await deleteSessionData(store, reset.before.key, old).catch((error: Error) => {
      throw new StorageError(`${maskApiKey(after.key)} was reset, but deleting the data of its old session ${old} failed (${error.message}); a running sandbox serve deletes it once it reads the reset, else it stays in storage`, { cause: error })
    })
  } finally {
    await store?.dispose()
  }
  const outcome = after.session_id
    ? 'now starts from an empty sandbox state'
    : `has no session: the server answers 401 SANDBOX_SESSION_REQUIRED until "sandbox keys reset" recreates one`
  // A reset gives a state, not access: a revoked or expired key is still refused with it.
  const status = describeKeyStatus(after, new Date())
  const still = status === 'revoked' || status === 'expired' ? `; it is ${status}, so the server still answers it 401 SANDBOX_API_KEY_INVALID` : ''
  process.stdout.write(`${maskApiKey(after.key)} ${outcome} (a server running with --keys on this keys file applies it within a second; one in open mode, without --keys, does not read it)${still}\n`)
}

/** Fails with a StorageError, before anything is changed, when `store` refuses to delete or to list keys. */
async function checkCanDelete(store: Storage): Promise<void> {
  const { StorageError } = await import('../../../storage/storage-error.js')
  const attempt = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call()
    } catch (error) {
      throw new StorageError(`the key was not reset: its storage refuses to ${what} (${(error as Error).message})`, { cause: error })
    }
  }
  await attempt('delete', () => store.removeItem('session:reset-check:none'))
  // The deletion lists the session's keys first: a redis user that may delete but not SCAN (one
  // allowed only @fast commands) failed it with the keys file changed already.
  await attempt('list keys', () => store.getKeys('session:reset-check:none'))
}

/** `sandbox keys reset KEY [--drop]`. */
export function registerKeysReset(keys: Command): void {
  const command = keys.command('reset').argument('[key]', 'the key, a unique prefix of it, or its masked form (asked for on a terminal)')
    .description("give a key a fresh, empty sandbox state (or with --drop, none)")
    .addOption(new Option('--drop', 'delete the session; requests get 401 SANDBOX_SESSION_REQUIRED until reset again'))
  addStorageOptions(addKeysFileOption(command)).action((key: string | undefined, flags: ResetFlags) => runReset(key, flags))
}
