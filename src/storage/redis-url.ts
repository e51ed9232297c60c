import { maskUrlPassword } from '../text/url-password.js'
import { StorageError } from './storage-error.js'

/**
 * Checks a `redis://` or `rediss://` URL (a host, and a database number as its path or as
 * `?db=N`, as the redis client reads it) and returns that database number (0 when it has none).
 */
export function checkRedisUrl(url: string): number {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new StorageError(`"${maskUrlPassword(url)}" is not a redis URL (e.g. redis://127.0.0.1:6379/0)`)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new StorageError(`redis storage needs a redis:// or rediss:// URL, not ${parsed.protocol}`)
  if (!parsed.hostname) throw new StorageError(`${maskUrlPassword(url)} names no host (e.g. redis://127.0.0.1:6379/0)`)
  const db = /^\/?(\d{1,2})?$/.exec(parsed.pathname)
  if (!db) throw new StorageError(`${maskUrlPassword(url)}: the path must be a database number such as /0, not ${parsed.pathname}`)
  const query = parsed.searchParams.get('db')
  if (query === null) return Number(db[1] ?? 0)
  // The client takes ?db= only when the path has no number: checked here too, so that the start
  // selects (and so checks) the database it will use, and a URL cannot name two.
  if (!/^\d{1,2}$/.test(query)) throw new StorageError(`${maskUrlPassword(url)}: ?db= must be a database number such as 0, not ${query}`)
  if (db[1] !== undefined && Number(db[1]) !== Number(query)) throw new StorageError(`${maskUrlPassword(url)} names database ${db[1]} in its path and ${query} in ?db=: give one`)
  return Number(query)
}
