import { existsSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-stdout-full')
afterEach(() => killAll())

// `sandbox openapi > spec.json` on a full disk: /dev/full answers every write with ENOSPC.
describe.skipIf(!existsSync('/dev/full'))('stdout on a full disk', () => {
  it('exits 2 saying the disk is full, without a stack, text or --json', async () => {
    const keys = `${await tempDir()}/keys.json`
    for (const args of [['openapi'], ['keys', 'list', '--keys', keys, '--json'], ['completion', 'bash']]) {
      const { code, stderr } = await runCli(args, { shell: 'exec > /dev/full;' })
      expect([args.join(' '), code]).toEqual([args.join(' '), 2])
      expect(stderr, args.join(' ')).toMatch(/^sandbox: cannot write: the disk is full or over its quota \(ENOSPC: no space left on device, write\); free some space, or send the output elsewhere\n$/)
    }
  })
})
