import { describe, expect, it } from 'vitest'
import { decodeJsonBytes, parseJsonText } from '../../src/json-text/read-json-text.js'

const BOM = [0xef, 0xbb, 0xbf]
const bytesOf = (text: string, prefix: number[] = []) => new Uint8Array([...prefix, ...Buffer.from(text, 'utf8')])
/** The message a text or its bytes are refused with. */
function refusal(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    expect((error as Error).name).toBe('JsonTextError')
    return (error as Error).message
  }
  throw new Error('expected a refusal')
}

describe('decodeJsonBytes and parseJsonText: JSON files from other editors', () => {
  it('reads UTF-8 with or without a byte order mark, CRLF or LF, tabs, with or without a last newline', () => {
    const expected = { rates: { btc_usd: 60000 }, name: 'Café 日本' }
    for (const text of ['{"rates":{"btc_usd":60000},"name":"Café 日本"}', '{\r\n\t"rates": {\r\n\t\t"btc_usd": 60000\r\n\t},\r\n\t"name": "Café 日本"\r\n}\r\n']) {
      for (const prefix of [[], BOM]) expect(parseJsonText(decodeJsonBytes(bytesOf(text, prefix)))).toEqual(expected)
    }
    // A BOM left in a text (read as a string elsewhere) is dropped by the parser too.
    expect(parseJsonText('\uFEFF[1]')).toEqual([1])
  })

  it('places a syntax error by line and column as an editor shows them, with CRLF and a BOM', () => {
    const lines = ['{', '  "rates": {', '    "btc_usd": 60000,', '  }', '}']
    for (const eol of ['\n', '\r\n']) {
      for (const prefix of [[], BOM]) {
        const text = decodeJsonBytes(bytesOf(lines.join(eol), prefix))
        expect(refusal(() => parseJsonText(text))).toBe('not valid JSON (line 3, column 21): a comma before }; JSON allows no trailing comma')
        const missingComma = decodeJsonBytes(bytesOf(['{', '\t"a": 1', '\t"b": 2', '}'].join(eol), prefix))
        expect(refusal(() => parseJsonText(missingComma))).toBe('not valid JSON (line 3, column 2): Expected \',\' or \'}\' after property value')
      }
    }
  })

  it('says a comment is one, which JSON has no room for, where V8 names only the / it met', () => {
    expect(refusal(() => parseJsonText('// production terms\n{"rates": {"btc_usd": 60000}}'))).toBe('not valid JSON (line 1, column 1): a comment; JSON allows no comments')
    expect(refusal(() => parseJsonText('{\n  "fees": {"loan_origination_percent": 2} /* was 1 */\n}'))).toBe('not valid JSON (line 2, column 43): a comment; JSON allows no comments')
    expect(refusal(() => parseJsonText('{"borrow_rates": {\r\n  "fixed": 18 // annual\r\n}}'))).toBe('not valid JSON (line 2, column 15): a comment; JSON allows no comments')
    expect(refusal(() => parseJsonText('{"a": /x/}'))).toBe('not valid JSON (line 1, column 7): Unexpected token \'/\'')
  })

  it('never repeats V8\'s copy of the text in its message', () => {
    expect(refusal(() => parseJsonText('{"a": \'x\'}'))).toBe('not valid JSON (line 1, column 7): Unexpected token \'\'\'')
  })

  it('refuses UTF-16 and UTF-32, with or without a byte order mark, saying to save as UTF-8', () => {
    const json = '{"a": 1}'
    const le = Buffer.from(json, 'utf16le')
    const be = Buffer.from(le).swap16()
    expect(refusal(() => decodeJsonBytes(new Uint8Array([0xff, 0xfe, ...le])))).toMatch(/^is UTF-16, not UTF-8; save it as UTF-8/)
    expect(refusal(() => decodeJsonBytes(new Uint8Array([0xfe, 0xff, ...be])))).toMatch(/^is UTF-16, not UTF-8; save it as UTF-8/)
    expect(refusal(() => decodeJsonBytes(new Uint8Array([0xff, 0xfe, 0, 0, 0x7b, 0, 0, 0])))).toMatch(/^is UTF-32, not UTF-8/)
    for (const bytes of [le, be]) expect(refusal(() => decodeJsonBytes(bytes))).toMatch(/^holds NUL bytes, so it is not UTF-8 text \(UTF-16\?\); save it as UTF-8/)
  })

  it('refuses bytes of another code page at their line and column, instead of reading them as �', () => {
    // "Café" saved as Windows-1252: é is the one byte 0xE9.
    const bytes = new Uint8Array([...Buffer.from('{\r\n  "name": "Caf'), 0xe9, ...Buffer.from('"\r\n}')])
    expect(refusal(() => decodeJsonBytes(bytes))).toMatch(/^is not valid UTF-8 \(line 2, column 15: a character of another code page, such as Windows-1252\?\); save it as UTF-8/)
  })

  it('says a file is empty rather than "Unexpected end of JSON input"', () => {
    expect(refusal(() => decodeJsonBytes(new Uint8Array()))).toBe('is empty')
    expect(refusal(() => decodeJsonBytes(new Uint8Array(BOM)))).toBe('is empty')
    expect(refusal(() => decodeJsonBytes(bytesOf(' \r\n\t\r\n')))).toBe('holds only whitespace')
  })
})
