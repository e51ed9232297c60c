const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }
// With C0 and C1, the bidirectional overrides and isolates: printed raw they reorder what follows
// on the line ("Trojan Source"), so a delivery id could show as another.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

function escapeControl(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * TEXT with its control characters written as escapes (`\u001b`, `\n`), for what comes from a
 * scenario file or an answer and is printed to a terminal: an escape sequence in a scenario name
 * would recolour the output, move the cursor or retitle the window, a bidi override reorder the
 * line, and a newline would forge a line of the report. `keepNewlines` is for messages made of
 * several lines on purpose.
 */
export function escapeControls(text: string, { keepNewlines = false } = {}): string {
  return text.replace(keepNewlines ? CONTROLS_BUT_NEWLINE : CONTROLS, escapeControl)
}
