import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const RECORD = join(import.meta.dirname, '../helpers/record-modules.mjs')
const tempDir = useTempDirs('sandbox-imports')

/** The project's own modules (dist/...) that `sandbox ARGS` loaded, and its exit code. */
async function loadedBy(args: string[]): Promise<{ code: number | null; modules: string[] }> {
  const file = join(await tempDir(), 'modules.txt')
  const { code } = await runCli(args, { env: { RECORD_MODULES: file }, nodeArgs: ['--import', RECORD] })
  const urls = (await readFile(file, 'utf8')).split('\n')
  return { code, modules: urls.filter((url) => url.includes('/dist/')).map((url) => url.slice(url.indexOf('/dist/') + 1)) }
}

describe('commands load what they use', () => {
  afterEach(killAll)

  // Listing, picking or refusing scenarios needs the scenario files and their schema; the runner
  // and the in-process server it starts (h3, storage, webhooks) cost ~0.5 s more of every such call.
  it('run --list, an unknown scenario and a bad flag of run do not load the server', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    for (const [args, exitCode] of [[['run', '--list'], 0], [['run', 'no-such-scenario'], 2], [['run', 'loan-flow', '--wait', 'soon'], 2]] as const) {
      const { code, modules } = await loadedBy([...args])
      expect(code, args.join(' ')).toBe(exitCode)
      expect(modules, args.join(' ')).toContain('dist/scenarios/load-scenarios.js')
      expect(modules.filter((module) => /^dist\/(server|webhooks|storage)\//.test(module)), args.join(' ')).toEqual([])
    }
  })

  it('a run loads the server it starts (the recording sees it)', async () => {
    const { code, modules } = await loadedBy(['run', 'partner-profile'])
    expect(code).toBe(0)
    expect(modules).toContain('dist/server/create-sandbox.js')
  })
})
