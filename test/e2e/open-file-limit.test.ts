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
})
