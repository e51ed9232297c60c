import { Help } from 'commander'
import { describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/main.js'
import { COMMANDS, GROUPS } from '../../src/cli/registry.js'

const help = new Help()

describe('command registry', () => {
  it('lists every command as its module defines it (name, usage, summary)', async () => {
    const program = await createProgram()
    const entries = [...COMMANDS.map((entry) => ({ parent: program, entry })), ...GROUPS.flatMap((group) => group.commands.map((entry) => ({ parent: program.commands.find((command) => command.name() === group.name)!, entry })))]
    expect(entries).toHaveLength(17)
    for (const { parent, entry } of entries) {
      const command = parent.commands.find((candidate) => candidate.name() === entry.name)
      expect(command, entry.name).toBeDefined()
      expect(help.subcommandTerm(command!)).toBe(`${entry.name} ${entry.usage}`)
      expect(command!.description()).toBe(entry.summary)
    }
  })

  it('writes every default in one form in the help, commander\'s own included: `default X`', async () => {
    const program = await createProgram()
    const commands = program.commands.flatMap((command) => [command, ...command.commands])
    expect(commands.length).toBeGreaterThan(17)
    const helps = commands.map((command) => [command.name(), command.helpInformation()] as const)
    expect(helps.filter(([, text]) => /default:/.test(text))).toEqual([])
    const text = Object.fromEntries(helps.map(([name, help]) => [name, help.replace(/\s+/g, ' ')]))
    expect(text.listen).toContain('port to listen on (0 = any free port) (default 4242)')
    expect(text.deliveries).toContain('(default any)')
    expect(text.sign).toContain('timestamp to sign with (default now)')
  })

  it('loads only the commands the command line names; --help lists the rest from the registry', async () => {
    const optionsOf = (program: Awaited<ReturnType<typeof createProgram>>, ...path: string[]) => path.reduce((command, name) => command.commands.find((sub) => sub.name() === name)!, program).options.length
    const bare = await createProgram(['node', 'sandbox', '--help'])
    expect(optionsOf(bare, 'serve')).toBe(0)
    expect(optionsOf(bare, 'keys', 'list')).toBe(0)
    expect(bare.helpInformation()).toContain('serve [options]              serve the whole /api/sandbox partner API locally')
    const keysList = await createProgram(['node', 'sandbox', 'keys', 'list', '--json'])
    expect(optionsOf(keysList, 'keys', 'list')).toBeGreaterThan(0)
    expect(optionsOf(keysList, 'serve')).toBe(0)
    expect(optionsOf(keysList, 'keys', 'create')).toBe(0)
  })
})
