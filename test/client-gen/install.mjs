// Installs this folder's generator (openapi-typescript needs TypeScript 5; the project builds with 7)
// when its lockfile is newer than the install: `npm test` runs this first, so a fresh clone and CI get it.
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'

const dir = import.meta.dirname
const marker = join(dir, 'node_modules', '.package-lock.json')
const lock = join(dir, 'package-lock.json')
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' })
}
