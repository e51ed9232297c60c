/** A URL (redis, or a forward target) with its password replaced by `***`, fit for logs and errors. */
export function maskUrlPassword(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    // WHATWG adds a slash after an http host; what was given is shown as it was written.
    return url.endsWith('/') ? parsed.href : parsed.href.replace(/\/$/, '')
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@')
  }
}
