import { maskUrlPassword } from '../server/url-password.js'
import { StorageError } from './storage-error.js'

/**
 * Checks a `redis://` or `rediss://` URL (a host, and a database number as its path if any) and
 * returns that database number (0 when the path has none).
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
  return Number(db[1] ?? 0)
}
