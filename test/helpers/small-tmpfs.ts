import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

/**
 * Why a small tmpfs cannot be mounted here ('' when it can): mounting needs root and a kernel
 * that lets this process mount (not so in most unprivileged containers).
 */
export const TMPFS_UNAVAILABLE: string = findTmpfsProblem()

function findTmpfsProblem(): string {
  if (process.platform !== 'linux') return 'tmpfs mounts are Linux only'
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root'
  const probe = spawnSync('sh', ['-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; s=$?; rmdir "$d"; exit $s'], { encoding: 'utf8' })
  return probe.status === 0 ? '' : `mount -t tmpfs is not permitted here (${(probe.stderr || '').trim() || `exit ${probe.status}`})`
}

/** Registers the unmounting of every tmpfs made, and returns a maker of tmpfs dirs of `size` (e.g. '512k'). */
export function useSmallTmpfs(prefix: string): (size: string) => Promise<string> {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) {
      spawnSync('umount', [dir])
      await rm(dir, { recursive: true, force: true })
    }
  })
  return async (size) => {
    const dir = await mkdtemp(join(tmpdir(), `${prefix}-`))
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' })
    if (mounted.status !== 0) throw new Error(`mount -t tmpfs failed: ${mounted.stderr}`)
    dirs.push(dir)
    return dir
  }
}
