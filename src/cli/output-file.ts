import { constants } from 'node:fs'
import { access, stat, writeFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { createDirectory } from '../files/create-directory.js'
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
