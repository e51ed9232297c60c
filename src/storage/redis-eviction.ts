import type { Redis } from 'ioredis'

/**
 * A warning when the redis server may delete the sandbox's keys to free memory (a `maxmemory`
 * with an `allkeys-*` policy, as managed and shared caches often have), or undefined: no limit,
 * a policy that only evicts keys with a TTL (the sandbox's documents have none), or a server that
 * refuses CONFIG GET (many managed ones), where nothing certain can be said.
 */
export async function describeEvictionRisk(client: Redis, where: string): Promise<string | undefined> {
  let settings: Record<string, string>
  try {
    // One pattern rather than two names: CONFIG GET takes a single parameter before redis 7.
    const reply = (await client.config('GET', 'maxmemory*')) as string[]
    settings = Object.fromEntries(reply.flatMap((_, index) => index % 2 === 0 ? [[reply[index], reply[index + 1]]] : []))
  } catch {
    return undefined
  }
  const policy = settings['maxmemory-policy']
  if (!policy?.startsWith('allkeys-') || !Number(settings.maxmemory)) return undefined
  return `redis ${where} has maxmemory ${settings.maxmemory} bytes with maxmemory-policy ${policy}: once full it deletes keys of any kind, the sandbox's too, and a key whose state was deleted starts again empty (loans gone, Idempotency-Keys applied again). Give the sandbox a redis whose policy is noeviction (or volatile-*: its keys have no TTL), or one without maxmemory`
}
