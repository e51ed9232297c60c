import { constants } from 'node:fs'
import { access, mkdir, stat, writeFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { CliError } from './cli-error.js'

/** The nearest ancestor of `dir` that exists: the one that refused a mkdir. */
async function nearestExisting(dir: string): Promise<{ path: string; isDirectory: boolean }> {
  for (let path = resolve(dir); ; path = dirname(path)) {
    const found = await stat(path).catch(() => undefined)
    if (found || path === dirname(path)) return { path, isDirectory: found?.isDirectory() ?? true }
  }
}

async function reasonFor(error: NodeJS.ErrnoException, file: string): Promise<string> {
  if (error.code === 'EEXIST' || error.code === 'ENOTDIR') {
    const blocker = await nearestExisting(dirname(file))
    if (!blocker.isDirectory) return `${blocker.path} is a file, not a directory`
  }
  if (error.code === 'EISDIR') return 'it is a directory'
  if (error.code === 'EACCES' || error.code === 'EPERM') return `permission denied${error.path ? ` (${error.path})` : ''}`
  if (error.code === 'EROFS') return 'read-only file system'
  if (error.syscall === 'mkdir' && error.path) return `cannot create the directory ${error.path} (${error.code})`
  return error.message
}

/**
 * Creates DIR and whichever of its parents are missing, one level at a time from the nearest
 * that exists. Not `mkdir(dir, { recursive: true })`: on a path the system will not create, such
 * as one under /proc, Node's recursive mkdir loops forever at full CPU; a plain mkdir fails.
 */
async function createDirectory(dir: string): Promise<void> {
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

async function failure(error: unknown, file: string, what: string): Promise<CliError> {
  const reason = await reasonFor(error as NodeJS.ErrnoException, file)
  return new CliError(`cannot write ${what} to ${file}: ${reason}`, { code: 'OUTPUT', cause: error })
}

/**
 * Creates FILE's directory and checks FILE can be written, without writing it yet, so a bad path
 * fails before the work whose result it would hold. `what` names the file in the error.
 */
export async function prepareOutputFile(file: string, what: string): Promise<void> {
  try {
    await createDirectory(dirname(file))
    const existing = await stat(file).catch(() => undefined)
    if (existing?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' })
    await access(existing ? file : dirname(file), constants.W_OK)
  } catch (error) {
    throw await failure(error, file, what)
  }
}

/** Writes an output file (creating its directory); a failure is an exit-2 CliError naming the path. */
export async function writeOutputFile(file: string, text: string, what: string): Promise<void> {
  try {
    await createDirectory(dirname(file))
    await writeFile(file, text)
  } catch (error) {
    throw await failure(error, file, what)
  }
}
