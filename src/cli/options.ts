import { InvalidArgumentError, Option, type Command } from 'commander'

/**
 * Option sets shared by several commands, defined once. Defaults are applied by the commands
 * (flag, then environment variable, then default), so they are only named in the help text.
 */
export const DEFAULT_DATA_DIR = '.sandbox'
/** Where `sandbox keys` keeps registered keys unless told otherwise. */
export const DEFAULT_KEYS_FILE = '.sandbox/keys.json'

/** `--storage` and `--data-dir`: where the sandbox state lives (`memory: false` for tools that read a server's storage from outside). */
export function addStorageOptions(command: Command, { memory = true } = {}): Command {
  const kinds = memory ? 'fs, memory or redis://HOST:PORT/DB' : 'fs or redis://HOST:PORT/DB'
  return command
    .addOption(new Option('--storage <kind>', `state storage: ${kinds} (env SANDBOX_STORAGE, default fs)`))
    .addOption(new Option('--data-dir <dir>', `directory of fs storage (env SANDBOX_DATA_DIR, default ${DEFAULT_DATA_DIR})`))
}

/** `--keys FILE` for the commands that edit the keys file. */
export function addKeysFileOption(command: Command): Command {
  return command.addOption(new Option('--keys <file>', `keys file (env SANDBOX_KEYS_FILE, default ${DEFAULT_KEYS_FILE})`))
}

/** `--json`: machine-readable output on stdout. */
export function addJsonOption(command: Command, what = 'print JSON instead of text'): Command {
  return command.addOption(new Option('--json', what))
}

/** Storage flags as given by the user. */
export interface StorageFlags {
  storage?: string
  dataDir?: string
}

/** Resolves storage flags with their environment fallbacks. */
export function resolveStorageFlags(flags: StorageFlags): { storage: string; dataDir: string } {
  return {
    // Trimmed once here: the value is also a redis URL, passed on as it is.
    storage: (flags.storage ?? process.env.SANDBOX_STORAGE ?? 'fs').trim(),
    dataDir: flags.dataDir ?? process.env.SANDBOX_DATA_DIR ?? DEFAULT_DATA_DIR,
  }
}

/** Resolves the keys file path for `sandbox keys`. */
export function resolveKeysFile(flag: string | undefined): string {
  return flag ?? process.env.SANDBOX_KEYS_FILE ?? DEFAULT_KEYS_FILE
}

/** `--secret`: the webhook signing secret (env SANDBOX_WEBHOOK_SECRET). */
export function addSecretOption(command: Command, what = 'webhook signing secret'): Command {
  return command.addOption(new Option('--secret <secret>', `${what} (env SANDBOX_WEBHOOK_SECRET)`))
}

/** The secret from the flag or the environment, if any. */
export function resolveSecret(flag: string | undefined): string | undefined {
  return flag ?? (process.env.SANDBOX_WEBHOOK_SECRET || undefined)
}

/** Parses a TCP port flag (0 = any free port). */
export function parsePort(value: string): number {
  const port = Number(value)
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('a port number from 0 to 65535')
  return port
}
