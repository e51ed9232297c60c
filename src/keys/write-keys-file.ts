import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { createDirectory } from '../files/create-directory.js'
import { renameReplacing } from '../files/rename-replacing.js'
import { syncFile } from '../files/sync-file.js'
import { KeysError } from './keys-error.js'
import type { KeysFile } from './keys-file-types.js'

/**
 * The file a write to PATH must replace: PATH, or the file its symbolic links lead to. Renamed
 * over the link itself, the new keys went into a plain file beside the link, and the file a
 * `serve --keys` on the target reads never got them. A link to a missing file leads there too.
 * A relative link is read from the real directory that holds it, as the system does: taken from
 * the path as written, `../keys.json` in a directory reached through a linked one led elsewhere.
 */
export async function resolveLinks(path: string): Promise<string> {
  let target = path
  for (let hops = 0; hops < 40; hops++) {
    const info = await fsp.lstat(target).catch(() => undefined)
    if (!info?.isSymbolicLink()) return target
    target = resolve(await fsp.realpath(dirname(target)), await fsp.readlink(target))
  }
  throw Object.assign(new Error(`too many symbolic links from ${path}`), { code: 'ELOOP' })
}

/** Writes a keys file atomically (temp file, fsync, rename), so a running server never reads half of it. */
export async function writeKeysFile(path: string, file: KeysFile): Promise<void> {
  let temp: string | undefined
  try {
    const target = await resolveLinks(path)
    temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    await createDirectory(dirname(target))
    const handle = await fsp.open(temp, 'w', 0o600)
    try {
      await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`)
      await syncFile(handle)
    } finally {
      await handle.close()
    }
    await renameReplacing(temp, target)
  } catch (error) {
    if (temp) await fsp.rm(temp, { force: true }).catch(() => {})
    throw new KeysError(`cannot write keys file ${path}: ${(error as Error).message}`, { cause: error })
  }
}
