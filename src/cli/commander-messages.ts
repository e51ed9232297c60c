/** The long flag of an option's flags as commander writes them (`-p, --port <port>` is `--port`). */
function longFlagOf(flags: string): string {
  return flags.match(/--[\w-]+/)?.[0] ?? flags.split(/[ ,]/)[0]!
}

/**
 * A parse error of commander's (an unknown option, a missing or refused value) in the words the
 * CLI's own errors use, without commander's `error: ` (the caller prefixes `sandbox: `, as it
 * does every error): `--status: invalid value "lost": expected one of ...` rather than
 * `error: option '--status <status>' argument 'lost' is invalid. one of ...`, and
 * `--port needs a value` as an empty value is told, and a suggestion inline as the CLI's own
 * (`unknown command 'srve' (did you mean serve?)`). Other messages keep their words.
 */
export function describeCommanderError(text: string): string {
  // Commander puts its suggestion on a line of its own; the CLI's own errors have it inline.
  const message = text.trim().replace(/^error: /, '').replace(/\n\(Did you mean (.+)\?\)$/, ' (did you mean $1?)')
  const invalid = message.match(/^option '([^']+)' argument '([\s\S]*)' is invalid\. ([\s\S]+)$/)
  if (invalid) return `${longFlagOf(invalid[1]!)}: invalid value ${JSON.stringify(invalid[2])}: expected ${invalid[3]}`
  const missing = message.match(/^option '([^']+)' argument missing$/)
  if (missing) return `${longFlagOf(missing[1]!)} needs a value`
  return message
}
