/**
 * Whether TEXT is an http(s) URL with a host, as typed (`http://` and a host), that fetch can
 * also parse: `http://[::1` or `http://my host` pass the prefix check alone, and fetch then threw
 * at the first request, a crash with a stack instead of a usage error.
 */
export function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^/]/.test(text) && URL.canParse(text)
}
