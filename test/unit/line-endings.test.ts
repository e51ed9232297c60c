import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')

// Git for Windows checks text files out with CRLF by default (core.autocrlf=true): .ci/run and the
// shell helpers then fail in Git Bash or WSL, and fixtures compared byte for byte change.
const inCheckout = existsSync(join(ROOT, '.git')) && spawnSync('git', ['--version']).status === 0

describe.skipIf(!inCheckout)('a checkout on Windows', () => {
  it('keeps LF line ends in every text file, whatever core.autocrlf says', () => {
    const files = ['.ci/run', 'test/helpers/zsh-complete.zsh', 'bin/sandbox.js', 'scenarios/loan-flow.json', 'fixtures/receivers/receiver.py', 'fixtures/webhook-signature-vectors.json', 'src/index.ts']
    const attributes = execFileSync('git', ['check-attr', 'eol', '--', ...files], { cwd: ROOT, encoding: 'utf8' })
    expect(attributes.trim().split('\n')).toEqual(files.map((file) => `${file}: eol: lf`))
  })
})
