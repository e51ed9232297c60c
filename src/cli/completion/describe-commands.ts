import { Help, type Argument, type Command, type Option } from 'commander'
import { readPathKind } from '../path-options.js'
import type { ArgumentSpec, CommandSpec, OptionSpec, ValueSpec } from './command-tree.js'
import { readValueHint, type ValueHint } from './value-hints.js'

/** Values a hint names by source, looked up here so that command modules load none of them. */
async function loadSource(source: NonNullable<ValueHint['source']>): Promise<string[]> {
  if (source === 'event-types') {
    // Both spellings the commands take: `serve` and the README write the short one (`loan.issued`).
    const types = (await import('../../webhooks/types.js')).EVENT_TYPES
    return [...types, ...types.map((type) => type.replace(/^sandbox\./, ''))]
  }
  if (source === 'scenario-ids' || source === 'scenario-tags') {
    // The shipped ones: a script is written once; `run --dir`'s ids are read by the shell (dirWords).
    const scenarios = await (await import('../../scenarios/load-scenarios.js')).loadScenarios()
    return source === 'scenario-ids' ? scenarios.map((scenario) => scenario.id) : [...new Set(scenarios.flatMap((scenario) => scenario.tags))].sort()
  }
  throw new Error(`unknown completion source ${String(source)}`)
}

async function toValueSpec(hint: ValueHint | undefined, paths: 'file' | 'dir' | undefined): Promise<ValueSpec> {
  const spec: ValueSpec = {
    words: [...(hint?.source ? await loadSource(hint.source) : []), ...(hint?.words ?? [])],
    prefixes: [...(hint?.prefixes ?? [])],
  }
  const kind = paths ?? hint?.paths
  if (kind) spec.paths = kind
  if (hint?.separator) spec.separator = hint.separator
  if (hint?.dirOption) spec.dirWords = { option: hint.dirOption, ids: hint.source === 'scenario-ids' }
  return spec
}

async function describeOption(option: Option): Promise<OptionSpec> {
  const hint = readValueHint(option)
  const flags = [option.short, option.long].filter((flag): flag is string => flag !== undefined)
  const described: OptionSpec = { flags, description: option.description, repeatable: hint?.repeatable ?? Array.isArray(option.defaultValue) }
  if (option.required || option.optional) {
    const name = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? 'value'
    const spec = await toValueSpec(hint ?? (option.argChoices ? { words: option.argChoices } : undefined), readPathKind(option))
    described.value = { name, required: option.required, spec }
  }
  return described
}

async function describeArgument(argument: Argument): Promise<ArgumentSpec> {
  const hint = readValueHint(argument) ?? (argument.argChoices ? { words: argument.argChoices } : undefined)
  return { name: argument.name(), description: argument.description, required: argument.required, variadic: argument.variadic, spec: await toValueSpec(hint, undefined) }
}

async function describeCommand(command: Command, help: Help): Promise<CommandSpec> {
  const children = help.visibleCommands(command)
  const commands: CommandSpec[] = []
  for (const child of children) {
    // Commander's own `help [command]` (listed, yet not one of the subcommands) takes the name of a sibling.
    if (!command.commands.includes(child)) {
      const names = children.filter((other) => other !== child).map((other) => other.name())
      commands.push({ name: child.name(), description: child.description(), options: [], commands: [], arguments: [{ name: 'command', description: 'the command to describe', required: false, variadic: false, spec: { words: names, prefixes: [] } }] })
    } else commands.push(await describeCommand(child, help))
  }
  const options = await Promise.all(help.visibleOptions(command).map(describeOption))
  const args = await Promise.all(command.registeredArguments.map(describeArgument))
  return { name: command.name(), description: command.description(), options, arguments: args, commands }
}

/**
 * The completion tree of PROGRAM: every visible command, subcommand, option (`--help` and
 * `--version` included) and argument, with the values each completes. PROGRAM must have every
 * command loaded (createProgram() without argv): a stub lists no options.
 */
export async function describeCommands(program: Command): Promise<CommandSpec> {
  return describeCommand(program, program.createHelp())
}
