import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/main.js'

// The README is the CLI's manual: every flag `--help` lists, and every environment variable the
// code reads, must be told there, in the section of its command.
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')
const SRC = fileURLToPath(new URL('../../src', import.meta.url))

/** The command's README section: from its heading to the next one, headings in code blocks aside. */
const SECTIONS: Record<string, string> = {
  serve: '## `sandbox serve`',
  run: '## `sandbox run`',
  logs: '### Keys and logs',
  keys: '### Keys and logs',
  openapi: '## OpenAPI document',
  webhook: '## Webhook tools',
  completion: '## Shell completion',
}

function readSection(heading: string): string {
  const lines = README.split('\n')
  const start = lines.findIndex((line) => line.startsWith(heading))
  expect(start, heading).toBeGreaterThanOrEqual(0)
  let fenced = false
  let end = start + 1
  for (; end < lines.length; end++) {
    if (lines[end]!.startsWith('```')) fenced = !fenced
    else if (!fenced && /^#+ /.test(lines[end]!)) break
  }
  return lines.slice(start, end).join('\n')
}

function listLeafCommands(command: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  const subs = command.commands.filter((sub) => sub.name() !== 'help')
  if (subs.length === 0) return [{ path, command }]
  return subs.flatMap((sub) => listLeafCommands(sub, [...path, sub.name()]))
}

function listSourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? listSourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

describe('the README', () => {
  it('tells every flag and environment variable of each command in that command\'s section', async () => {
    const program = await createProgram()
    const leaves = listLeafCommands(program)
    expect(leaves).toHaveLength(17)
    const missing: string[] = []
    for (const { path, command } of leaves) {
      const section = readSection(SECTIONS[path[0]!]!)
      for (const option of command.options) {
        const flag = option.long!
        if (!new RegExp(`${flag}(?![\\w-])`).test(section)) missing.push(`sandbox ${path.join(' ')} ${flag}`)
        for (const env of option.description.match(/\bSANDBOX_[A-Z_]+/g) ?? []) {
          if (!section.includes(env)) missing.push(`sandbox ${path.join(' ')} ${flag}: ${env}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it('names every environment variable the code reads', () => {
    const code = (file: string) => readFileSync(file, 'utf8').split('\n').filter((line) => !/^\s*(\/\/|\*)/.test(line)).join('\n')
    // Read directly, or through the helpers of src/cli/env-values.ts and options.ts (the name last).
    const reads = /process\.env\.([A-Z_]+)|(?:readEnv|readPathVariable)\('([A-Z_]+)'\)|read(?:Path)?Setting\([^()]*?'([A-Z_]+)'\)/g
    const read = new Set(listSourceFiles(SRC).flatMap((file) => [...code(file).matchAll(reads)].map((match) => (match[1] ?? match[2] ?? match[3])!)))
    // Every variable the serve and run tables name is among them: the helpers are all seen.
    for (const name of ['SANDBOX_PORT', 'SANDBOX_HOST', 'SANDBOX_STORAGE', 'SANDBOX_DATA_DIR', 'SANDBOX_KEYS_FILE', 'SANDBOX_RATE_LIMIT', 'SANDBOX_TLS_CERT', 'SANDBOX_FAULTS', 'SANDBOX_BASE_URL', 'SANDBOX_API_KEY', 'SANDBOX_WEBHOOK_SECRET', 'SANDBOX_RECEIVER_URL']) expect(read, name).toContain(name)
    expect([...read].filter((name) => !README.includes(`\`${name}\``))).toEqual([])
  })

  it('gives each flag in its command\'s table the env variable and default that `--help` gives', async () => {
    const program = await createProgram()
    const wrong: string[] = []
    for (const name of ['serve', 'run']) {
      const command = program.commands.find((sub) => sub.name() === name)!
      const rows = readSection(SECTIONS[name]!).split('\n').filter((line) => line.startsWith('| `--'))
      for (const option of command.options) {
        const row = rows.find((line) => new RegExp(`^\\| \`${option.long}[\` ]`).test(line))
        if (!row) continue
        const [, , env = '', fallback = ''] = row.split('|').map((cell) => cell.trim())
        const helpEnv = /\(env (SANDBOX_[A-Z_]+)/.exec(option.description)?.[1]
        if ((helpEnv ?? '') !== env.replace(/`/g, '')) wrong.push(`${name} ${option.long}: env ${helpEnv} in --help, ${env || 'none'} in the README`)
        const helpDefault = /[(,;] ?default:? ([^),;]+)[),;]/.exec(option.description)?.[1]
        if (helpDefault && !fallback.replace(/`/g, '').startsWith(helpDefault)) wrong.push(`${name} ${option.long}: default ${helpDefault} in --help, ${fallback} in the README`)
      }
    }
    expect(wrong).toEqual([])
  })
})
