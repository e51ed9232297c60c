import { findJsonErrorOffset, findLineAndColumn } from './find-json-error.js'

/**
 * What is wrong with the bytes or text of a hand-edited JSON file (a scenario, `--config`, the
 * keys file), worded without the file name: each caller says which file in its own error type.
 */
export class JsonTextError extends Error {
  override name = 'JsonTextError'
  /** The 1-based line the message names, for reports that point at it (a GitHub annotation). */
  line?: number
  constructor(message: string, line?: number) {
    super(message)
    if (line !== undefined) this.line = line
  }
}

const BYTE_ORDER_MARK = '\uFEFF'
const SAVE_AS_UTF8 = 'save it as UTF-8 (in most editors: "Save with encoding" or the encoding in the status bar)'
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The encoding a byte order mark names, for those that are not UTF-8. */
function describeForeignMark(bytes: Uint8Array): string | undefined {
  const [a, b, c, d] = bytes
  if (a === 0xff && b === 0xfe) return c === 0 && d === 0 ? 'UTF-32' : 'UTF-16'
  if (a === 0xfe && b === 0xff) return 'UTF-16'
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return 'UTF-32'
  return undefined
}

/**
 * The text of a JSON file's bytes: UTF-8, a byte order mark dropped (Windows editors write one).
 * UTF-16 (Notepad's "Unicode"), an empty file and bytes that are not UTF-8 (a "ANSI" code page)
 * are refused with what to do, rather than parsed into an error about a '�' or a garbled value.
 */
export function decodeJsonBytes(bytes: Uint8Array): string {
  const foreign = describeForeignMark(bytes)
  if (foreign) throw new JsonTextError(`is ${foreign}, not UTF-8; ${SAVE_AS_UTF8}`)
  // JSON has no NUL outside an escape: these are the zero bytes of UTF-16 without a mark.
  if (bytes.includes(0)) throw new JsonTextError(`holds NUL bytes, so it is not UTF-8 text (UTF-16?); ${SAVE_AS_UTF8}`)
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    const before = utf8.decode(bytes.subarray(0, findInvalidUtf8(bytes)))
    const { line, column } = findLineAndColumn(before, before.length)
    throw new JsonTextError(`is not valid UTF-8 (line ${line}, column ${column}: a character of another code page, such as Windows-1252?); ${SAVE_AS_UTF8}`, line)
  }
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1)
  if (text.trim() === '') throw new JsonTextError(text === '' ? 'is empty' : 'holds only whitespace')
  return text
}

/** The offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function findInvalidUtf8(bytes: Uint8Array): number {
  let low = 0
  let high = bytes.length
  // The longest valid prefix, by bisection: a prefix that cuts a character in two is invalid too,
  // so the answer is where the bad sequence starts.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    try {
      utf8.decode(bytes.subarray(0, middle))
      low = middle
    } catch {
      high = middle - 1
    }
  }
  return low
}

/**
 * `not valid JSON (line 5, column 3): Expected double-quoted property name`: V8's message without
 * its offset and its copy of the text, plus where that is in an editor, and a hint for the most
 * common mistake of all. Lines end at LF, so a CRLF file counts as an editor does.
 */
export function describeJsonError(text: string, error: Error): string {
  return locateJsonError(text, error).message
}

/** describeJsonError's message, and the line it names (none when V8 and the scan find no place). */
function locateJsonError(text: string, error: Error): { message: string; line?: number } {
  const given = /(?: in JSON)? at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(error.message)
  const offset = given ? Number(given[1]) : findJsonErrorOffset(text)
  const reason = given ? error.message.slice(0, given.index) : error.message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
  if (offset === undefined) return { message: `not valid JSON: ${reason}` }
  // A comma left before } or ]: point at the comma, which is what has to go.
  const comma = text.slice(0, offset).trimEnd().length - 1
  if (text[comma] === ',' && (text[offset] === '}' || text[offset] === ']')) {
    const { line, column } = findLineAndColumn(text, comma)
    return { message: `not valid JSON (line ${line}, column ${column}): a comma before ${text[offset]}; JSON allows no trailing comma`, line }
  }
  const { line, column } = findLineAndColumn(text, offset)
  // Editors and other tools' config files allow // and /* */; V8 says only "Unexpected token '/'".
  if (text.startsWith('//', offset) || text.startsWith('/*', offset)) return { message: `not valid JSON (line ${line}, column ${column}): a comment; JSON allows no comments`, line }
  return { message: `not valid JSON (line ${line}, column ${column}): ${reason}`, line }
}

/** Parses JSON text (a byte order mark allowed); a syntax error is a JsonTextError with its line and column. */
export function parseJsonText(text: string): unknown {
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1)
  try {
    return JSON.parse(text)
  } catch (error) {
    const { message, line } = locateJsonError(text, error as Error)
    throw new JsonTextError(message, line)
  }
}

/** Why a JSON file could not be read, in words: the errno names stay for the rare ones. */
export function describeReadError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EISDIR') return 'it is a directory, not a file'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'ELOOP') return 'a symbolic link loop'
  return message
}
