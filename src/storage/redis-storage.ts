import { createStorage, type Storage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import type { Redis } from 'ioredis'
import { takeRedisLease, type RedisLease } from './redis-lease.js'
import { maskUrlPassword } from '../text/url-password.js'
import { checkRedisUrl } from './redis-url.js'
import { StorageError } from './storage-error.js'
import { checkFormatMarker, FORMAT_KEY, formatMarkerText } from './storage-format.js'
import { adviseOn, pickStartReason, shortenReason } from './redis-advice.js'
import { describeEvictionRisk } from './redis-eviction.js'
import { readRedisGreeting } from './redis-greeting.js'

/** The prefix of every key the sandbox writes, so that it can share a redis database. */
export const REDIS_KEY_PREFIX = 'sandbox'

/** How long a command may take before the request that waits on it gets a storage error. */
const COMMAND_TIMEOUT_MS = 5_000
const CONNECT_TIMEOUT_MS = 3_000

/** Options of createRedisStorage. */
export interface RedisStorageOptions {
  /** Told when the connection is lost (`up` false) and when it is back (default: a line on stderr). */
  onStatus?: (message: string, up: boolean) => void
  /** The server's storage: it holds the database's lease (redis-lease.ts) while it runs. */
  owner?: boolean
}

/**
 * Storage in a redis server, through unstorage's redis driver. A request fails fast instead of
 * waiting while the server is unreachable (no offline queue, no command resent after a drop):
 * it gets 500 SANDBOX_API_KEY_DATABASE_REQUIRED while the client reconnects in the background.
 * Rejects with a StorageError when the server cannot be reached at start, or, for the owner,
 * when another sandbox server holds the database's lease.
 */
export async function createRedisStorage(url: string, options: RedisStorageOptions = {}): Promise<Storage> {
  const db = checkRedisUrl(url)
  const shown = maskUrlPassword(url)
  const onStatus = options.onStatus ?? ((message: string) => process.stderr.write(`sandbox: ${message}\n`))
  const driver = redisDriver({
    // The client turns TLS on only for a lowercase rediss:// (it parses the rest in any case):
    // REDISS://HOST connected in plain text, password included, while shown as rediss://.
    url: url.trim().replace(/^rediss?:/i, (scheme) => scheme.toLowerCase()),
    base: REDIS_KEY_PREFIX,
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times: number) => Math.min(times * 200, 2_000),
    // The client's first command (CLIENT SETINFO) drops its error: a redis that refuses the client
    // as it connects (protected mode's DENIED) then failed the start with only 'Connection is closed'.
    disableClientInfo: true,
    // Listing a prefix scans the whole database; redis's default of 10 keys a call made a start
    // over 100,000 keys take 2.1 s instead of 0.4 s, and `sandbox logs` 1.1 s instead of 0.25 s.
    scanCount: 1000,
  })
  const client = driver.getInstance!() as Redis
  let lastError: string | undefined
  let lease: RedisLease | undefined
  // Only changes after a successful start are told: a failed start is the StorageError below.
  let state: 'starting' | 'up' | 'lost' | 'closing' = 'starting'
  client.on('error', (error: Error & { code?: string }) => {
    lastError = pickStartReason(lastError, error.code ?? error.message)
  })
  client.on('close', () => {
    if (state !== 'up') return
    state = 'lost'
    // A tool (`sandbox logs --follow`) answers no requests: it reads again once redis is back.
    const meanwhile = options.owner ? 'requests answer 500 SANDBOX_API_KEY_DATABASE_REQUIRED until it is back' : 'reading again once it is back'
    onStatus(`redis ${shown}: connection lost${lastError ? ` (${lastError})` : ''}; ${meanwhile}`, false)
  })
  client.on('ready', () => {
    if (state !== 'lost') return
    state = 'up'
    lastError = undefined
    onStatus(`redis ${shown}: connection restored`, true)
    void lease?.renew()
  })
  try {
    await client.connect()
    // The client selects the URL's database while connecting, and when the server refuses that
    // number it goes on in database 0: selected again here, a refusal fails the start.
    if (db > 0) await client.select(db)
    // A read of a sandbox key rather than a PING: a redis user whose ACL leaves out sandbox:*
    // keys is refused here, at start, instead of on every request.
    await client.exists(`${REDIS_KEY_PREFIX}:owner`)
    // A database a newer version wrote is refused before anything (the lease included) is written.
    const marker = await client.get(`${REDIS_KEY_PREFIX}:${FORMAT_KEY}`)
    checkFormatMarker(marker, `redis database ${shown}`, 'database (--storage redis://HOST:PORT/DB)', `${REDIS_KEY_PREFIX}:${FORMAT_KEY}`)
    if (options.owner) lease = await takeRedisLease(client, `${REDIS_KEY_PREFIX}:owner`, shown, (message) => onStatus(message, false))
    // Marked once the lease is held: one of an earlier version is format 1 (storage-format.ts).
    if (options.owner && marker === null) await client.set(`${REDIS_KEY_PREFIX}:${FORMAT_KEY}`, formatMarkerText())
  } catch (error) {
    state = 'closing'
    // Given back at once (the marker's write failed after it was taken), not left to lapse.
    await lease?.release().catch(() => {})
    client.disconnect()
    if (error instanceof StorageError) throw error
    // What redis answered, or else the connection's own failure (the rejection only says closed).
    const message = (error as Error).message
    let reason = shortenReason((error as Error).name === 'ReplyError' ? message : lastError ?? message)
    const tls = url.trim().toLowerCase().startsWith('rediss:')
    // A reset can hide the line redis wrote before closing (maxclients, DENIED): asked again, silently.
    if (!tls && reason === 'ECONNRESET') reason = (await readRedisGreeting(url)) ?? reason
    throw new StorageError(`cannot use redis at ${shown} (${reason}); ${adviseOn(reason, tls, options.owner ?? false)}`, { cause: error })
  }
  state = 'up'
  // Told by the server only: a tool's short run would repeat it to no purpose.
  const risk = options.owner ? await describeEvictionRisk(client, shown) : undefined
  if (risk) onStatus(risk, false)
  const dispose = driver.dispose!.bind(driver)
  // While the connection is down, say so instead of the client's "Stream isn't writeable".
  const whenConnected = <A extends unknown[], R>(call: (...args: A) => R) => (...args: A): R => {
    if (client.status !== 'ready') throw new StorageError(`redis ${shown} is not connected (${lastError ?? client.status}); retrying in the background`)
    if (lease?.lostTo) throw new StorageError(`redis ${shown} is now used by another sandbox server (${lease.lostTo})`)
    return call(...args)
  }
  // A write first makes sure the lease is still this server's when its renewals fell behind.
  const whenOwned = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => {
    const connected = whenConnected(call)
    return (...args: A): Promise<R> => {
      const confirming = lease?.confirm()
      return confirming ? confirming.then(() => connected(...args)) : connected(...args)
    }
  }
  return createStorage({
    driver: {
      ...driver,
      hasItem: whenConnected(driver.hasItem.bind(driver)),
      getItem: whenConnected(driver.getItem.bind(driver)),
      getItems: driver.getItems && whenConnected(driver.getItems.bind(driver)),
      setItem: whenOwned(async (...args: Parameters<NonNullable<typeof driver.setItem>>) => driver.setItem!(...args)),
      removeItem: whenOwned(async (...args: Parameters<NonNullable<typeof driver.removeItem>>) => driver.removeItem!(...args)),
      getKeys: whenConnected(driver.getKeys.bind(driver)),
      async dispose() {
        state = 'closing'
        await lease?.release()
        return dispose()
      },
    },
  })
}
