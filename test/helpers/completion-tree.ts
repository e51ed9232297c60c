import type { CommandSpec } from '../../src/cli/completion/command-tree.js'

/** A value and a description full of what each shell would read as code, and how each script must spell them. */
export const NASTY = {
  value: String.raw`it's $(touch pwned) "a b" ` + '`touch pwned`' + String.raw` ;|&<>*?[]\\`,
  description: String.raw`key's [x]: $(touch pwned) ` + '`touch pwned`',
  bash: String.raw`'it'\''s $(touch pwned) "a b" ` + '`touch pwned`' + String.raw` ;|&<>*?[]\\'`,
  zsh: String.raw`'it'\''s $(touch pwned) "a b" ` + '`touch pwned`' + String.raw` ;|&<>*?[]\\'`,
  zshDescription: String.raw`key'\''s \[x\]\: $(touch pwned) ` + '`touch pwned`',
  fish: String.raw`'it\'s $(touch pwned) "a b" ` + '`touch pwned`' + String.raw` ;|&<>*?[]\\\\'`,
  fishDescription: String.raw`'key\'s [x]: $(touch pwned) ` + '`touch pwned`' + `'`,
}

const help = { flags: ['-h', '--help'], description: 'display help for command', repeatable: false }

/** `sandbox group sub [--kind K] [--file F] [--free V] [item]`, and `sandbox top`. */
export const SMALL_TREE: CommandSpec = {
  name: 'sandbox',
  description: 'the program',
  arguments: [],
  options: [{ flags: ['-v', '--version'], description: 'output the version number', repeatable: false }, help],
  commands: [
    { name: 'top', description: 'a command', arguments: [], commands: [], options: [help] },
    {
      name: 'group',
      description: 'a group',
      arguments: [],
      options: [help],
      commands: [
        {
          name: 'sub',
          description: 'a subcommand',
          commands: [],
          options: [
            { flags: ['--kind'], description: NASTY.description, repeatable: false, value: { name: 'kind', required: true, spec: { words: ['plain', NASTY.value], prefixes: ['redis://'] } } },
            { flags: ['--file'], description: 'a file', repeatable: false, value: { name: 'file', required: true, spec: { words: [], prefixes: [], paths: 'file' } } },
            { flags: ['--free'], description: 'a free value', repeatable: false, value: { name: 'value', required: true, spec: { words: [], prefixes: [] } } },
            help,
          ],
          arguments: [{ name: 'item', description: 'an item', required: false, variadic: false, spec: { words: ['one', 'two'], prefixes: [] } }],
        },
        { name: 'help', description: 'display help for command', options: [], commands: [], arguments: [{ name: 'command', description: 'the command to describe', required: false, variadic: false, spec: { words: ['sub'], prefixes: [] } }] },
      ],
    },
  ],
}
