import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-open-files')
afterEach(() => killAll())

describe.skipIf(process.platform === 'win32')('a low open-file limit', () => {
  it('serve under ulimit -n 64 exits 2 saying to raise the limit, without a stack', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--data-dir', await tempDir()], { shell: 'ulimit -n 64 &&' })
    // Which open fails first depends on timing: the error, or the one wrapping it, names EMFILE.
    expect({ code, stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^sandbox: too many open files \([^\n]*EMFILE[^\n]*\): raise the open-file limit \(ulimit -n/) })
    expect(stderr).not.toMatch(/unexpected error|\n\s+at /)
  })

  it('a limit too low for the CLI\'s own modules to load is exit 2 with the same advice, not node\'s stack', async () => {
    const dir = await tempDir()
    const outcomes = await Promise.all([16, 20, 24, 28, 32, 36, 40].map(async (limit) => ({ limit, ...(await runCli(['serve', '--port', '0', '--data-dir', dir], { shell: `ulimit -n ${limit} &&` })) })))
    // Below some limit node cannot start, or read bin/sandbox.js: nothing of ours runs then. Above
    // it, what fails is the loading of dist/, or the CLI once it runs.
    const ours = outcomes.filter(({ stderr }) => stderr.startsWith('sandbox:') || stderr.includes('/dist/'))
    for (const { limit, code, stderr } of ours) {
      expect({ limit, code, stderr }).toEqual({ limit, code: 2, stderr: expect.stringMatching(/^sandbox: too many open files \(EMFILE[^\n]*\): raise the open-file limit \(ulimit -n; serve needs about 100 to start/) })
    }
    // The limits span the loading of the CLI itself, whose failure bin/sandbox.js reports.
    expect(ours.some(({ stderr }) => /serve needs about 100 to start\)\n$/.test(stderr))).toBe(true)
  })
})
