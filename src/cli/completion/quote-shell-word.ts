/** TEXT as one bash or zsh word, literally: single quotes, a quote inside as '\''. */
export function quoteShellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}
