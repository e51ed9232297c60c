/**
 * What is wrong with BASE_URL as the root the API's paths are appended to (as text), or undefined:
 * text that is no URL (a space from a quoting slip made every request an "Invalid URL"), a scheme
 * other than http(s) or a user name or password in it (every call was a retried network error),
 * a query or fragment (the paths went after it, so every request asked for the root) or a URL
 * that ends in the API's own /api/sandbox (copied from API docs, every request asked for
 * /api/sandbox/api/sandbox/... and was a 404). Worded to follow the URL in a message.
 */
export function findBaseUrlProblem(baseUrl: string): string | undefined {
  const spaced = /\s/.test(baseUrl)
  if (spaced || !URL.canParse(baseUrl)) return `is not a URL${spaced ? ': it holds a space or a line break (check its quotes)' : ''}`
  const url = new URL(baseUrl)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `is not an http(s) URL: the API answers http: and https: only, not ${url.protocol} (give the server's root, as http://HOST:PORT)`
  // fetch refuses such a URL at every attempt, a retried "network error" whose message held the password.
  if (url.username || url.password) return 'cannot hold a user name or password: fetch sends none; the API takes its key from apiKey'
  // `?` or `#` with nothing after it leaves search and hash empty, yet the paths would still follow it.
  const tail = baseUrl.search(/[?#]/)
  if (tail >= 0) {
    return `must not have a query or fragment (${baseUrl.slice(tail)}): the API's paths would go after it, so every request would ask for ${url.pathname} itself: give the server's root, ${url.origin}${url.pathname.replace(/\/$/, '')}`
  }
  const prefix = url.pathname.match(/^(.*?)\/api\/sandbox\/?$/)
  if (!prefix) return undefined
  return `ends in /api/sandbox, which every path of the API starts with (GET state would ask for ${url.pathname.replace(/\/$/, '')}/api/sandbox/state): give the server's root, ${url.origin}${prefix[1]}`
}

/** BASE_URL as a message shows it: a user name and password masked, the rest exactly as written. */
export function showBaseUrl(baseUrl: string): string {
  // Masked by hand: the URL helpers parse it, which would drop the very space a message is about.
  return JSON.stringify(baseUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, '$1****@'))
}
