import { Option, type Command } from 'commander'
import { CliError, printJsonDocument, printErrorsAsJson } from '../../cli-error.js'
import { parseExpiryTime } from '../../expiry-time.js'
import { escapeControls } from '../../../text/escape-controls.js'
import { formatDuration, MAX_DURATION_MS, readDurationFlag } from '../../duration-text.js'
import { addJsonOption, addKeysFileOption, resolveKeysFile } from '../../options.js'

interface CreateFlags {
  keys?: string
  label?: string
  expiresIn?: string
  expiresAt?: string
  json?: boolean
}

async function runCreate(flags: CreateFlags, command: Command): Promise<void> {
  const { addKey } = await import('../../../keys/manage-keys.js')
  const { describeKeyStatus } = await import('../../../keys/keys-file.js')
  const path = resolveKeysFile(flags.keys)
  let expiresAt: string | null = null
  try {
    if (flags.expiresIn && flags.expiresAt) throw new Error('give --expires-in or --expires-at, not both')
    // Named as the other commands' duration flags are (--wait, --timeout): `invalid duration "-1d"` alone did not say which.
    if (flags.expiresIn) expiresAt = new Date(Date.now() + readDurationFlag('--expires-in', flags.expiresIn, MAX_DURATION_MS)!).toISOString()
    if (flags.expiresAt) expiresAt = parseExpiryTime(flags.expiresAt)
  } catch (error) {
    throw new CliError((error as Error).message)
  }
  const record = await addKey(path, { label: flags.label, expiresAt })
  if (flags.json) {
    printJsonDocument(command, record, 2)
    return
  }
  // The key alone on stdout, so KEY=$(sandbox keys create) works; the rest is for the reader.
  process.stdout.write(`${record.key}\n`)
  const expiry = record.expires_at ? `, expires ${record.expires_at}` : ''
  // Escaped as `keys list` shows a label: an escape sequence in it (or in the path) would recolour the terminal.
  process.stderr.write(`${escapeControls(`added to ${path}${record.label ? ` as "${record.label}"` : ''}${expiry}; use it with: sandbox serve --keys ${path}`)}\n`)
  // Allowed, to test how a client handles an expired key, but rarely meant.
  if (describeKeyStatus(record, new Date()) === 'expired') {
    process.stderr.write('note: this key has already expired; the server answers it 401 SANDBOX_API_KEY_INVALID\n')
  }
}

/** `sandbox keys create`. */
export function registerKeysCreate(keys: Command): void {
  const command = keys.command('create').description('register a new sandbox API key')
  addKeysFileOption(command)
    .addOption(new Option('--label <label>', 'a name to recognise the key by'))
    .addOption(new Option('--expires-in <duration>', `expire after a duration such as 30d, 1.5h or 90m (at most ${formatDuration(MAX_DURATION_MS)})`))
    .addOption(new Option('--expires-at <time>', 'expire at an ISO 8601 time with its zone (2027-01-31T00:00:00Z), or a date (midnight UTC)'))
  addJsonOption(printErrorsAsJson(command), 'print the new key record as JSON (an error: {"error": {"code", "message"}})')
    .action((flags: CreateFlags) => runCreate(flags, command))
}
