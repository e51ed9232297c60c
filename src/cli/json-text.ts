const C1_AND_DEL = /[\u007f-\u009f]/g

/**
 * VALUE as JSON text for stdout, with DEL and the C1 controls written as `\u` escapes.
 * JSON.stringify escapes only U+0000-U+001F: a client's Idempotency-Key or a webhook header byte
 * 0x9b (read as latin1: U+009B, CSI) went to `sandbox logs --json` raw, and a terminal showing it
 * may act on it. Outside strings JSON has only ASCII, so the replacement never changes the value.
 */
export function formatJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(C1_AND_DEL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
