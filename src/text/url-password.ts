/**
 * A URL (redis, a forward target, a receiver) with its password replaced by `***`, fit for logs and
 * errors: the one before the host, a user part without one (`http://TOKEN@host`), and a
 * `password` query parameter (the redis client reads one).
 */
export function maskUrlPassword(url: string): string {
  let shown: string
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    // A user part alone is a secret: redis-cli reads redis://SECRET@HOST as a password, and an
    // http receiver's URL carries a token there (basic auth with an empty password).
    else if (parsed.username) parsed.username = '***'
    // WHATWG adds a slash after an http host; what was given is shown as it was written.
    shown = url.endsWith('/') ? parsed.href : parsed.href.replace(/\/$/, '')
  } catch {
    shown = url.replace(/\/\/[^@/]*@/, '//***@')
  }
  // Named as the client reads it: `pass%77ord=` is a password too.
  return shown.replace(/([?&])([^=&#]*)=[^&#]*/g, (whole, separator: string, name: string) => {
    return new URLSearchParams(`${name}=`).keys().next().value?.toLowerCase() === 'password' ? `${separator}${name}=***` : whole
  })
}

/**
 * TEXT given where a URL was expected but not one that is taken (`valkey://`, `redis:/`, a typo),
 * fit for the error that echoes it: what stands before its last `@` may be a password, and the
 * parser cannot say where it ends, so all of it after the scheme is shown as `***`.
 */
export function maskCredentials(text: string): string {
  const at = text.lastIndexOf('@')
  if (at === -1) return maskUrlPassword(text)
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/i.exec(text.slice(0, at))?.[0] ?? ''
  return maskUrlPassword(`${scheme}***${text.slice(at)}`)
}
