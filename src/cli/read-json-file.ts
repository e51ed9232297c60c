import { readFile } from 'node:fs/promises'
import { CliError } from './cli-error.js'

/**
 * A JSON file given to `flag` (`--config`, `--faults`): a byte order mark and CRLF are fine, a
 * syntax error says its line, a key written twice is refused.
 */
export async function readJsonFile(flag: string, path: string): Promise<Record<string, unknown>> {
  const { decodeJsonBytes, describeReadError, parseJsonText } = await import('../json-text/read-json-text.js')
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new CliError(`cannot read ${flag} ${path}: ${describeReadError(error)}`, { cause: error })
  }
  let text: string
  let config: Record<string, unknown>
  try {
    text = decodeJsonBytes(bytes)
    config = parseJsonText(text) as Record<string, unknown>
  } catch (error) {
    throw new CliError(`${flag} ${path}: ${(error as Error).message}`, { cause: error })
  }
  // A figure set twice would start the server on the last one without a word: refuse, as for scenarios.
  const { describeDuplicateKey, findDuplicateKeys } = await import('../scenarios/find-duplicate-keys.js')
  const duplicates = findDuplicateKeys(text)
  if (duplicates.length > 0) {
    throw new CliError(duplicates.map((duplicate) => `${flag} ${path}: ${duplicate.path.join('.')}: ${describeDuplicateKey(duplicate)}`).join('\n'))
  }
  return config
}
