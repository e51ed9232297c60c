const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g

function escapeControl(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * TEXT with its control characters written as escapes (`\u001b`, `\n`), for what comes from a
 * scenario file or an answer and is printed to a terminal: an escape sequence in a scenario name
 * would recolour the output, move the cursor or retitle the window, and a newline would forge a
 * line of the report. `keepNewlines` is for messages made of several lines on purpose.
 */
export function escapeControls(text: string, { keepNewlines = false } = {}): string {
  return text.replace(keepNewlines ? CONTROLS_BUT_NEWLINE : CONTROLS, escapeControl)
}
