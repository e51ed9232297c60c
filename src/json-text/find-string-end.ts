const QUOTE = 0x22
const BACKSLASH = 0x5c

/** In JSON TEXT, the index of the quote that closes the string opened at START (its length if none does). */
export function findStringEnd(text: string, start: number): number {
  let i = start + 1
  while (i < text.length && text.charCodeAt(i) !== QUOTE) i += text.charCodeAt(i) === BACKSLASH ? 2 : 1
  return i
}
