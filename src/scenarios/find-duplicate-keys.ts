import { findStringEnd } from '../json-text/find-string-end.js'

/** A key written more than once in one object of a JSON text. */
export interface DuplicateKey {
  /** The path of the key: the enclosing keys and array indexes, then the key itself. */
  path: (string | number)[]
  /** The key as JSON decodes it, so `"\u0061"` and `"a"` are one key. */
  key: string
  /** The 1-based line of each occurrence, in order. */
  lines: number[]
}

interface ObjectFrame {
  kind: 'object'
  /** First line of each key seen, or its report once it is seen again. */
  seen: Map<string, number | DuplicateKey>
  expectsKey: boolean
  key: string
}

interface ArrayFrame {
  kind: 'array'
  index: number
}

type Frame = ObjectFrame | ArrayFrame

function pathTo(frames: Frame[], key: string): (string | number)[] {
  const path: (string | number)[] = frames.slice(0, -1).map((frame) => (frame.kind === 'object' ? frame.key : frame.index))
  path.push(key)
  return path
}

/**
 * Finds every key written twice in one object of `text`, which must be valid JSON (parse it
 * first). JSON.parse keeps the last value of such a key without a word, so whatever the earlier
 * ones said is lost. One pass, no recursion: linear in the text, plus the paths it reports.
 */
export function findDuplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = []
  const frames: Frame[] = []
  let line = 1
  for (let i = 0; i < text.length; i++) {
    const top = frames.at(-1)
    switch (text[i]) {
      case '\n':
        line++
        break
      case '"': {
        const end = findStringEnd(text, i)
        if (top?.kind === 'object' && top.expectsKey) {
          const raw = text.slice(i, end + 1)
          // Most keys have no escape; the rest are decoded by JSON itself, as JSON.parse compares them.
          const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
          const seen = top.seen.get(key)
          if (seen === undefined) top.seen.set(key, line)
          else if (typeof seen === 'number') {
            const duplicate = { path: pathTo(frames, key), key, lines: [seen, line] }
            top.seen.set(key, duplicate)
            found.push(duplicate)
          } else seen.lines.push(line)
          top.key = key
        }
        i = end
        break
      }
      case '{':
        frames.push({ kind: 'object', seen: new Map(), expectsKey: true, key: '' })
        break
      case '[':
        frames.push({ kind: 'array', index: 0 })
        break
      case '}':
      case ']':
        frames.pop()
        break
      case ':':
        if (top?.kind === 'object') top.expectsKey = false
        break
      case ',':
        if (top?.kind === 'object') top.expectsKey = true
        else if (top) top.index++
        break
      // Numbers, true, false, null and whitespace other than a newline hold nothing to track.
    }
  }
  return found
}

/** `duplicate key "status" (lines 12 and 14): JSON keeps only the last one, ...`. */
export function describeDuplicateKey({ key, lines }: DuplicateKey): string {
  const distinct = [...new Set(lines)]
  const where = distinct.length === 1 ? `line ${distinct[0]}` : `lines ${distinct.slice(0, -1).join(', ')} and ${distinct.at(-1)}`
  const lost = lines.length === 2 ? 'the first' : 'the earlier ones'
  return `duplicate key ${JSON.stringify(key)} (${where}): JSON keeps only the last one, so ${lost} would be ignored`
}
