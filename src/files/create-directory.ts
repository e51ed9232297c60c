import { mkdir, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

/**
 * Creates DIR and whichever of its parents are missing, one level at a time from the nearest
 * that exists. Not `mkdir(dir, { recursive: true })`: on a path the system will not create, such
 * as one under /proc, Node's recursive mkdir loops forever at full CPU; a plain mkdir fails.
 */
export async function createDirectory(dir: string): Promise<void> {
  const missing: string[] = []
  for (let path = resolve(dir); ; path = dirname(path)) {
    // A stat that fails for another reason (a parent not searchable) is left to the mkdir to report.
    const found = await stat(path).catch(() => undefined)
    if (found?.isDirectory()) break
    if (found) throw Object.assign(new Error(`${path} is not a directory`), { code: 'ENOTDIR', path })
    missing.push(path)
    if (path === dirname(path)) break
  }
  for (const path of missing.reverse()) {
    await mkdir(path).catch((error: NodeJS.ErrnoException) => {
      // Made meanwhile by someone else: fine, as long as it is a directory (the next level or the write says if not).
      if (error.code !== 'EEXIST') throw error
    })
  }
}
