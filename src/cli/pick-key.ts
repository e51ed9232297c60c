import { canPrompt } from './can-prompt.js'
import { CliError } from './cli-error.js'
import { escapeControls } from '../text/escape-controls.js'
import { withPromptSignals } from './prompt-signals.js'

/**
 * The KEY argument, or on a terminal a choice among the registered keys. Without a TTY (or in
 * CI, see canPrompt) a missing KEY is a usage error: prompts never block a script.
 */
export async function resolveKeyArgument(key: string | undefined, path: string, verb: string): Promise<string> {
  if (key) return key
  if (!canPrompt()) throw new CliError(`missing KEY: sandbox keys ${verb} KEY`)
  const { readKeysFile, describeKeyStatus } = await import('../keys/keys-file.js')
  const { maskApiKey } = await import('../keys/api-key-text.js')
  const file = await readKeysFile(path)
  if (file.keys.length === 0) throw new CliError(`no keys in ${path}; create one with "sandbox keys create"`)
  const { select } = await import('@inquirer/prompts')
  const now = new Date()
  return withPromptSignals((signal) => select({
    message: `Which key to ${verb}?`,
    choices: file.keys.map((record) => ({
      // A label is free text in a file that may be shared: printed raw, an escape sequence would run.
      name: `${maskApiKey(record.key)}  ${escapeControls(record.label ?? '')}  (${describeKeyStatus(record, now)})`,
      value: record.key,
    })),
  }, { signal }))
}
