/** The fields read off an error and its causes. */
export interface CauseLike {
  code?: unknown
  name?: unknown
  message?: unknown
  cause?: unknown
}

/**
 * An error and the causes nested under it, outermost first, at most five: undici wraps the
 * socket's or TLS's own error under "fetch failed", and ofetch wraps that again.
 */
export function listCauses(error: unknown): CauseLike[] {
  const causes: CauseLike[] = []
  let current = error as CauseLike | undefined
  for (let depth = 0; current && depth < 5; depth++, current = current.cause as CauseLike | undefined) causes.push(current)
  return causes
}
