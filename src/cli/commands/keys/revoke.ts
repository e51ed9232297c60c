import type { Command } from 'commander'
import { addKeysFileOption, resolveKeysFile } from '../../options.js'
import { resolveKeyArgument } from '../../pick-key.js'

async function runRevoke(key: string | undefined, flags: { keys?: string }): Promise<void> {
  const { revokeKey } = await import('../../../keys/manage-keys.js')
  const { maskApiKey } = await import('../../../keys/api-key-text.js')
  const path = resolveKeysFile(flags.keys)
  const query = await resolveKeyArgument(key, path, 'revoke')
  const { before, after } = await revokeKey(path, query)
  const note = before.revoked_at ? 'was already revoked' : 'revoked'
  // As `keys reset` says: an open-mode server reads no keys file, so it goes on accepting the key.
  process.stdout.write(`${maskApiKey(after.key)} ${note}; a server running with --keys on this keys file refuses it with 401 SANDBOX_API_KEY_INVALID within a second; one in open mode, without --keys, does not read it and still accepts the key\n`)
}

/** `sandbox keys revoke KEY`. */
export function registerKeysRevoke(keys: Command): void {
  const command = keys.command('revoke').argument('[key]', 'the key, a unique prefix of it, or its masked form (asked for on a terminal)').description('revoke a registered key')
  addKeysFileOption(command).action((key: string | undefined, flags: { keys?: string }) => runRevoke(key, flags))
}
