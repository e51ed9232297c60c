import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/main.js'
import { COMMANDS, GROUPS } from '../../src/cli/registry.js'
import type { CommandSpec } from '../../src/cli/completion/command-tree.js'
import { describeCommands } from '../../src/cli/completion/describe-commands.js'
import { renderBash } from '../../src/cli/completion/render-bash.js'
import { renderFish } from '../../src/cli/completion/render-fish.js'
import { renderZsh } from '../../src/cli/completion/render-zsh.js'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import { loadScenarios } from '../../src/scenarios/load-scenarios.js'

const SHORT_TYPES = EVENT_TYPES.map((type) => type.slice('sandbox.'.length))
import { NASTY, SMALL_TREE } from '../helpers/completion-tree.js'

const find = (tree: CommandSpec, ...path: string[]) => path.reduce((command, name) => command.commands.find((child) => child.name === name)!, tree)
const option = (command: CommandSpec, flag: string) => command.options.find((candidate) => candidate.flags.includes(flag))!

describe('the completion tree of the real program', () => {
  it('has every registry command and group subcommand, each with every option its module defines, and --help', async () => {
    const program = await createProgram()
    const tree = await describeCommands(program)
    const pairs: [CommandSpec, Command, string][] = []
    for (const entry of COMMANDS) pairs.push([find(tree, entry.name), program.commands.find((command) => command.name() === entry.name)!, entry.usage])
    for (const group of GROUPS) {
      const groupCommand = program.commands.find((command) => command.name() === group.name)!
      expect(find(tree, group.name).commands.map((child) => child.name)).toEqual([...group.commands.map((entry) => entry.name), 'help'])
      for (const entry of group.commands) pairs.push([find(tree, group.name, entry.name), groupCommand.commands.find((command) => command.name() === entry.name)!, entry.usage])
    }
    expect(pairs).toHaveLength(17)
    for (const [spec, command, usage] of pairs) {
      expect(spec, command.name()).toBeDefined()
      const flags = spec.options.flatMap((described) => described.flags)
      // Loaded, not a stub: the options --help promises are there.
      if (usage.includes('[options]')) expect(command.options.length, command.name()).toBeGreaterThan(0)
      for (const defined of command.options) for (const flag of [defined.short, defined.long].filter(Boolean)) expect(flags, command.name()).toContain(flag)
      expect(flags).toEqual(expect.arrayContaining(['-h', '--help']))
      expect(spec.arguments.map((argument) => argument.name)).toEqual(command.registeredArguments.map((argument) => argument.name()))
    }
    expect(tree.commands.map((child) => child.name)).toEqual([...COMMANDS.map((entry) => entry.name), ...GROUPS.map((group) => group.name), 'help'])
    expect(tree.options.flatMap((described) => described.flags)).toEqual(['-v', '--version', '-h', '--help'])
  })

  it('knows the values that are finite or known, paths for <file> and <dir> options, and nothing for a free value', async () => {
    const tree = await describeCommands(await createProgram())
    const serve = find(tree, 'serve')
    expect(option(serve, '--storage').value!.spec).toEqual({ words: ['fs', 'memory'], prefixes: ['redis://'] })
    expect(option(find(tree, 'logs'), '--storage').value!.spec).toEqual({ words: ['fs'], prefixes: ['redis://'] })
    expect(option(serve, '--rate-limit').value!.spec.words).toEqual(['off'])
    expect(option(serve, '--config').value!.spec.paths).toBe('file')
    expect(option(serve, '--data-dir').value!.spec.paths).toBe('dir')
    expect(option(find(tree, 'run'), '--dir').value!.spec.paths).toBe('dir')
    expect(option(find(tree, 'openapi'), '--output').value!.spec.paths).toBe('file')
    expect(find(tree, 'run').arguments[0]!.spec.paths).toBe('file')
    const shipped = await loadScenarios()
    expect(find(tree, 'run').arguments[0]!.spec.words).toEqual(shipped.map((scenario) => scenario.id))
    expect(option(find(tree, 'run'), '--tag').value!.spec.words).toEqual([...new Set(shipped.flatMap((scenario) => scenario.tags))].sort())
    expect(option(find(tree, 'run'), '--tag').repeatable).toBe(true)
    expect(find(tree, 'webhook', 'trigger').arguments[0]!.spec.words).toEqual([...EVENT_TYPES, ...SHORT_TYPES])
    expect(option(find(tree, 'webhook', 'register'), '--events').value!.spec).toEqual({ words: [...EVENT_TYPES, ...SHORT_TYPES, 'all'], prefixes: [], separator: ',' })
    expect(option(find(tree, 'webhook', 'deliveries'), '--status').value!.spec.words).toEqual(['pending', 'delivered', 'retrying', 'failed'])
    expect(option(find(tree, 'webhook', 'deliveries'), '--status').repeatable).toBe(true)
    expect(find(tree, 'completion').arguments[0]!.spec.words).toEqual(['bash', 'zsh', 'fish'])
    expect(find(tree, 'help').arguments[0]!.spec.words).toEqual(tree.commands.map((child) => child.name).filter((name) => name !== 'help'))
    for (const free of [option(serve, '--port'), option(serve, '--host'), option(find(tree, 'webhook', 'trigger'), '--base-url'), option(find(tree, 'webhook', 'trigger'), '--api-key')]) {
      expect(free.value!.spec, free.flags.join()).toEqual({ words: [], prefixes: [] })
    }
    expect(option(find(tree, 'webhook', 'trigger'), '--wait').value!.required).toBe(false)
  })
})

describe('the renderers, for a small fixed tree', () => {
  it('bash: a complete -F function with tables of commands, options and values, every value single-quoted', () => {
    const script = renderBash(SMALL_TREE)
    expect(script).toContain('complete -F _sandbox sandbox\n')
    expect(script).toContain(`    'group') __sandbox_w=('sub' 'help') ;;`)
    expect(script).toContain(`    'group sub|--kind') __sandbox_words "$2" 'plain' ${NASTY.bash}; __sandbox_prefixes "$2" 'redis://' ;;`)
    expect(script).toContain(`    'group sub|--file') __sandbox_paths -f "$2" ;;`)
    expect(script).toContain(`    'group sub|--free') __sandbox_n=1 ;;`)
    expect(script).not.toContain(`'group sub|--free') __sandbox_words`)
    // No negative subscript (words[-1]): bash before 4.3, macOS's /bin/bash 3.2 among them, refuses one.
    expect(script).not.toMatch(/\w\[-\d+\]/)
  })

  it('zsh: #compdef, a function per command on _arguments, values in functions, descriptions escaped', () => {
    const script = renderZsh(SMALL_TREE)
    expect(script.startsWith('#compdef sandbox\n')).toBe(true)
    expect(script).toContain(`  compadd -- 'plain' ${NASTY.zsh}\n  compadd -S '' -- 'redis://'`)
    expect(script).toContain(`'--kind=[${NASTY.zshDescription}]:kind:_sandbox__values`)
    expect(script).toContain(`'--free=[a free value]:value: '`)
    expect(script).toContain('compdef _sandbox sandbox')
  })

  it('fish: complete -l per option under a condition on the command, values printed by a function', () => {
    const script = renderFish(SMALL_TREE)
    expect(script).toContain(`complete -c sandbox -n '__sandbox_at \\'sandbox group sub\\'' -l kind -d ${NASTY.fishDescription} -x -a '(__sandbox_values 1)'`)
    expect(script).toContain(`            printf '%s\\n' 'plain' ${NASTY.fish} 'redis://'`)
    expect(script).toContain(`complete -c sandbox -n '__sandbox_at \\'sandbox group sub\\'' -l file -d 'a file' -r -F`)
    expect(script).toContain(`complete -c sandbox -n '__sandbox_at \\'sandbox group sub\\'' -l free -d 'a free value' -x\n`)
  })
})
