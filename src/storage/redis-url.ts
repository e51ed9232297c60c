import { maskCredentials, maskUrlPassword } from '../text/url-password.js'
import { StorageError } from './storage-error.js'

/** How to write a password that has a character a URL gives a meaning to. */
const ENCODE_ADVICE = 'percent-encode @, :, /, ?, # and % in the user name or password (%40, %3A, %2F, %3F, %23, %25)'

/**
 * Checks a `redis://` or `rediss://` URL (a host, and a database number as its path or as
 * `?db=N`, as the redis client reads it) and returns that database number (0 when it has none).
 */
export function checkRedisUrl(url: string): number {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    // Most often a password with a / ? or # in it, which ends the host early: the parser cannot
    // say where the password ends, so all before the last @ is hidden.
    const encode = url.includes('@') ? `; ${ENCODE_ADVICE}` : ''
    throw new StorageError(`"${maskCredentials(url)}" is not a redis URL (e.g. redis://127.0.0.1:6379/0)${encode}`)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new StorageError(`redis storage needs a redis:// or rediss:// URL, not ${parsed.protocol}`)
  // An @ after the host belongs to a password cut short by its own / ? or #: the URL parsed, but
  // the host, port and password it names are not the ones meant, and the password would be shown.
  const strayAt = `${parsed.pathname}${parsed.hash}`.includes('@') || [...parsed.searchParams].some(([name, value]) => name.includes('@') || (name !== 'password' && value.includes('@')))
  if (strayAt) {
    throw new StorageError(`"${maskCredentials(url)}" has an @ after its host: a / ? or # in a password ends the host early; ${ENCODE_ADVICE}`)
  }
  // The client decodes them, and a % that starts no %XX threw from its constructor: 'unexpected error'.
  try {
    decodeURIComponent(`${parsed.username}:${parsed.password}`)
  } catch {
    throw new StorageError(`${maskUrlPassword(url)} has a % that starts no %XX in its user name or password; ${ENCODE_ADVICE}`)
  }
  // The client lets the query override the scheme: rediss://HOST?tls= connected in plain text.
  if (parsed.searchParams.has('tls')) throw new StorageError(`${maskUrlPassword(url)}: TLS is chosen by the scheme, rediss:// or redis://, not by ?tls=`)
  if (!parsed.hostname) throw new StorageError(`${maskUrlPassword(url)} names no host (e.g. redis://127.0.0.1:6379/0)`)
  const db = /^\/?(\d{1,9})?$/.exec(parsed.pathname)
  if (!db) throw new StorageError(`${maskUrlPassword(url)}: the path must be a database number such as /0, not ${parsed.pathname}`)
  // The client takes the last ?db=, the check below the first: with two, the start checked one
  // database and the client used another (one out of range then fell back to 0 unchecked).
  if (parsed.searchParams.getAll('db').length > 1) throw new StorageError(`${maskUrlPassword(url)}: ?db= is given more than once: give one`)
  const query = parsed.searchParams.get('db')
  if (query === null) return Number(db[1] ?? 0)
  // The client takes ?db= only when the path has no number: checked here too, so that the start
  // selects (and so checks) the database it will use, and a URL cannot name two.
  if (!/^\d{1,9}$/.test(query)) throw new StorageError(`${maskUrlPassword(url)}: ?db= must be a database number such as 0, not ${query}`)
  if (db[1] !== undefined && Number(db[1]) !== Number(query)) throw new StorageError(`${maskUrlPassword(url)} names database ${db[1]} in its path and ${query} in ?db=: give one`)
  return Number(query)
}
