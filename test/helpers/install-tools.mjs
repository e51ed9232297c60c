// Installs the third-party tools the consumer tests run, each folder from its own lockfile, when
// that lockfile is newer than the install: `npm test` runs this first, so a fresh clone and CI get
// them. test/client-gen: openapi-typescript (it needs TypeScript 5; the project builds with 7),
// also the TypeScript 5 a CommonJS consumer's check uses. test/jest-consumer: Jest.
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describeNpmCommand } from './npm-command.mjs'

const npm = describeNpmCommand(['ci', '--no-audit', '--no-fund', '--loglevel=error'])
for (const folder of ['client-gen', 'jest-consumer']) {
  const dir = join(import.meta.dirname, '..', folder)
  const marker = join(dir, 'node_modules', '.package-lock.json')
  const lock = join(dir, 'package-lock.json')
  if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
    execFileSync(npm.file, npm.args, { cwd: dir, stdio: 'inherit', shell: npm.shell })
  }
}
