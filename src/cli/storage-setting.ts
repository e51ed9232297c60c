import { CliError } from './cli-error.js'
import { CliErrorCodes } from '../errors/codes.js'
import { resolveStorageFlags, type StorageFlags } from './options.js'
import type { StorageKind } from '../storage/create-storage.js'

/**
 * The storage a command is to open, from its flags and their environment fallbacks, with its kind
 * checked. A kind set in SANDBOX_STORAGE that is not one is named as that variable's: it is on no
 * command line to look for.
 */
export async function readStorageSetting(flags: StorageFlags): Promise<{ storage: string; dataDir: string; kind: StorageKind }> {
  const { parseStorageKind } = await import('../storage/create-storage.js')
  const { storage, dataDir, storageSource } = resolveStorageFlags(flags)
  try {
    return { storage, dataDir, kind: parseStorageKind(storage) }
  } catch (error) {
    if (storageSource !== 'SANDBOX_STORAGE') throw error
    throw new CliError(`SANDBOX_STORAGE: ${(error as Error).message}`, { code: CliErrorCodes.STORAGE, cause: error })
  }
}
