/**
 * A URL (redis, or a forward target) with its password replaced by `***`, fit for logs and
 * errors: the one before the host, and a `password` query parameter (the redis client reads one).
 */
export function maskUrlPassword(url: string): string {
  let shown: string
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    // WHATWG adds a slash after an http host; what was given is shown as it was written.
    shown = url.endsWith('/') ? parsed.href : parsed.href.replace(/\/$/, '')
  } catch {
    shown = url.replace(/\/\/[^@/]*@/, '//***@')
  }
  return shown.replace(/([?&]password=)[^&#]*/gi, '$1***')
}
