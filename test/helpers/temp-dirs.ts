import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

/** Registers cleanup for the calling test file and returns a maker of fresh temp dirs. */
export function useTempDirs(prefix: string): () => Promise<string> {
  const dirs: string[] = []
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  })
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}-`))
    dirs.push(dir)
    return dir
  }
}
