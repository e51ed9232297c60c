import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { describeNpmCommand } from '../helpers/npm-command.mjs'

// `npm test` runs test/helpers/install-tools.mjs first, which runs `npm ci` for the consumer checks.
describe('the npm that install-tools runs', () => {
  it('is the npm running the script, under this node, on every system', () => {
    const env = { npm_execpath: 'C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js' }
    expect(describeNpmCommand(['ci'], { platform: 'win32', env, node: 'C:\\node.exe' })).toEqual({ file: 'C:\\node.exe', args: [env.npm_execpath, 'ci'], shell: false })
  })

  it('on Windows without npm_execpath is npm.cmd through the shell: Node refuses to start a .cmd without one (EINVAL)', () => {
    expect(describeNpmCommand(['ci', '--no-audit'], { platform: 'win32', env: {} })).toEqual({ file: 'npm.cmd ci --no-audit', args: [], shell: true })
    // pnpm or yarn running the script is no npm to run `npm ci` with.
    expect(describeNpmCommand(['ci'], { platform: 'win32', env: { npm_execpath: 'C:\\pnpm\\bin\\pnpm.cjs' } }).shell).toBe(true)
    expect(describeNpmCommand(['ci'], { platform: 'linux', env: {} })).toEqual({ file: 'npm', args: ['ci'], shell: false })
  })

  it('runs here as described', () => {
    const npm = describeNpmCommand(['--version'])
    expect(execFileSync(npm.file, npm.args, { shell: npm.shell, encoding: 'utf8' })).toMatch(/^\d+\.\d+\.\d+/)
  })
})
