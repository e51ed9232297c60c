/** TEXT cut to at most MAX characters, the last three of them `...` where it was cut. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}
