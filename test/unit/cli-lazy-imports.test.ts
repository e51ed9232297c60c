import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = join(import.meta.dirname, '../../src')

/** Module specifiers a file loads when it is imported (type-only and dynamic imports excluded). */
function readStaticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers: string[] = []
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    if (!match[1]) specifiers.push(match[2]!)
  }
  return specifiers
}

/** Every source file and package reached from `entry` through static imports. */
function walkStaticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const specifier of readStaticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      else packages.add(specifier)
    }
  }
  visit(entry)
  return { files, packages }
}

// `sandbox --help` must stay fast: building the program loads commander and the registry, no
// command module; a command's module loads commander and cli/ helpers (and the error codes, a
// table of constants), and nothing of the server, storage or prompts until the command actually runs.
describe('sandbox --help', () => {
  it('loads no command module, and no server, storage, prompt or colour code', () => {
    const { files, packages } = walkStaticGraph(join(SRC, 'cli/main.ts'))
    expect([...files].map((file) => file.slice(SRC.length + 1)).sort()).toEqual(['cli/cli-error.ts', 'cli/commander-messages.ts', 'cli/drain-output.ts', 'cli/expand-home.ts', 'cli/held-signals.ts', 'cli/help-command.ts', 'cli/http-url.ts', 'cli/init-signals.ts', 'cli/json-signals.ts', 'cli/json-text.ts', 'cli/main.ts', 'cli/path-options.ts', 'cli/registry.ts', 'cli/stop-signals.ts', 'cli/terminal-gone.ts', 'cli/usage-hints.ts', 'errors/codes.ts', 'files/describe-this-version.ts', 'text/escape-controls.ts'])
    expect([...packages].filter((name) => !name.startsWith('node:'))).toEqual(['commander'])
  })

  it('each command module loads only commander, cli/ helpers and text/ ones until its command runs', () => {
    const commandFiles = readdirSync(join(SRC, 'cli/commands'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
    expect(commandFiles.length).toBeGreaterThanOrEqual(11)
    for (const file of commandFiles) {
      const { files, packages } = walkStaticGraph(join(SRC, 'cli/commands', file))
      expect([...packages].filter((name) => !name.startsWith('node:') && name !== 'commander'), file).toEqual([])
      expect([...files].map((path) => path.slice(SRC.length + 1)).filter((path) => !path.startsWith('cli/') && !path.startsWith('text/') && path !== 'errors/codes.ts'), file).toEqual([])
    }
  })
})

// The redis client loads only when --storage names a redis server: fs and memory do not pay for it.
describe('the server library', () => {
  it('reaches no redis client through static imports', () => {
    const { files, packages } = walkStaticGraph(join(SRC, 'index.ts'))
    expect(files.has(join(SRC, 'server/create-sandbox.ts'))).toBe(true)
    expect([...packages].filter((name) => name.includes('redis'))).toEqual([])
    expect(files.has(join(SRC, 'storage/redis-storage.ts'))).toBe(false)
  })
})

