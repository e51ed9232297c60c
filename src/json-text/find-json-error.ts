/**
 * Where JSON.parse failed on `text`. V8 gives the position in most messages, but not in its
 * "Unexpected token" ones (a trailing comma in an array, a comment, a single quote), which are
 * the usual mistakes in a hand-written file: this scanner finds that offset itself.
 */

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const LITERALS: Record<string, string> = { t: 'true', f: 'false', n: 'null' }
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y

/** The string opened at `start`: where it ends, or where it stops being valid JSON. */
function scanString(text: string, start: number): { valid: boolean; end: number } {
  let i = start + 1
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 0x22) return { valid: true, end: i + 1 }
    if (code < 0x20) return { valid: false, end: i }
    if (code === 0x5c) {
      ESCAPE.lastIndex = i
      if (!ESCAPE.test(text)) return { valid: false, end: i }
      i = ESCAPE.lastIndex
    } else i++
  }
  return { valid: false, end: text.length }
}

/** The value at `start` that is not an object or array: where it ends, or where it stops being valid JSON. */
function scanPrimitive(text: string, start: number): { valid: boolean; end: number } {
  if (text[start] === '"') return scanString(text, start)
  const word = LITERALS[text[start]!]
  if (word !== undefined) {
    // `tru}` is wrong at the }, as V8's "Unexpected token '}'" says.
    let i = 0
    while (i < word.length && text[start + i] === word[i]) i++
    return { valid: i === word.length, end: start + i }
  }
  NUMBER.lastIndex = start
  return NUMBER.test(text) ? { valid: true, end: NUMBER.lastIndex } : { valid: false, end: start }
}

/**
 * The offset of the first character that makes `text` invalid JSON (`text.length` when it ends
 * too early), or undefined when it is valid. Iterative, so deep nesting cannot overflow the stack.
 */
export function findJsonErrorOffset(text: string): number | undefined {
  const open: ('{' | '[')[] = []
  let expect: 'value' | 'first-value' | 'key' | 'first-key' | 'colon' | 'after' = 'value'
  let i = 0
  for (;;) {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++
    if (i >= text.length) return expect === 'after' && open.length === 0 ? undefined : i
    const char = text[i]!
    if ((expect === 'first-value' && char === ']') || (expect === 'first-key' && char === '}')) {
      open.pop()
      i++
      expect = 'after'
    } else if (expect === 'value' || expect === 'first-value') {
      if (char === '{' || char === '[') {
        open.push(char)
        i++
        expect = char === '{' ? 'first-key' : 'first-value'
        continue
      }
      const { valid, end } = scanPrimitive(text, i)
      if (!valid) return end
      i = end
      expect = 'after'
    } else if (expect === 'key' || expect === 'first-key') {
      if (char !== '"') return i
      const { valid, end } = scanString(text, i)
      if (!valid) return end
      i = end
      expect = 'colon'
    } else if (expect === 'colon') {
      if (char !== ':') return i
      i++
      expect = 'value'
    } else {
      const top = open.at(-1)
      if (top === undefined) return i
      if (char === ',') expect = top === '{' ? 'key' : 'value'
      else if (char === (top === '{' ? '}' : ']')) open.pop()
      else return i
      i++
    }
  }
}

/** The 1-based line and column of an offset into `text`. */
export function findLineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, column: offset - lineStart + 1 }
}
