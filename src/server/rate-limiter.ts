/** A rate limit: at most `limit` requests in any `windowSeconds` window. */
export interface RateLimit {
  limit: number
  windowSeconds: number
}

/** The verdict for one request and the values of its RateLimit headers. */
export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the oldest counted request leaves the window (a slot frees up). */
  resetSeconds: number
}

/** The default of spec part 8: 120 requests per 60 seconds per key. */
export const DEFAULT_RATE_LIMIT: RateLimit = { limit: 120, windowSeconds: 60 }

/**
 * Parses `N/SECONDS` (e.g. `120/60`) or `off`. Throws an Error with an actionable message on
 * anything else.
 */
export function parseRateLimit(text: string): RateLimit | false {
  const trimmed = text.trim().toLowerCase()
  if (trimmed === 'off') return false
  const match = /^(\d+)\/(\d+)$/.exec(trimmed)
  const limit = Number(match?.[1])
  const windowSeconds = Number(match?.[2])
  if (!match || limit < 1 || windowSeconds < 1) {
    throw new Error(`invalid rate limit "${text}": expected N/SECONDS such as 120/60, or off`)
  }
  // Past 2^53 a number is rounded (9007199254740993 reads as ...992): refused here, with the text
  // as typed, rather than by createSandbox's check, whose message names no flag and shows the rounded value.
  if (!Number.isSafeInteger(limit) || !Number.isSafeInteger(windowSeconds)) {
    throw new Error(`invalid rate limit "${text}": N and SECONDS are whole numbers from 1 to ${Number.MAX_SAFE_INTEGER}, such as 120/60`)
  }
  return { limit, windowSeconds }
}

/**
 * Sliding-window log limiter: each key keeps the times of its accepted requests inside the
 * window, so memory per key is bounded by the limit. Rejected requests are not counted, or a
 * client that keeps retrying would never get back in.
 */
export function createRateLimiter(rule: RateLimit) {
  const windowMs = rule.windowSeconds * 1000
  const hits = new Map<string, number[]>()

  function prune(times: number[], now: number): void {
    // Times later than now are from before the clock was set back (NTP, a resumed VM): counted
    // as now, they keep the key's count and let it in again within one window. Left as they
    // were, they kept the key out until the clock came round again, an hour for an hour back.
    for (let i = times.length - 1; i >= 0 && times[i]! > now; i--) times[i] = now
    let drop = 0
    while (drop < times.length && times[drop]! <= now - windowMs) drop++
    if (drop > 0) times.splice(0, drop)
  }

  /** The decision and headers for a window holding `times` (already pruned). */
  function describe(times: readonly number[], allowed: boolean, now: number): RateDecision {
    const oldest = times[0] ?? now
    return {
      allowed,
      limit: rule.limit,
      remaining: rule.limit - times.length,
      resetSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)),
    }
  }

  function check(key: string, now = Date.now()): RateDecision {
    let times = hits.get(key)
    if (!times) {
      times = []
      hits.set(key, times)
    }
    prune(times, now)
    const allowed = times.length < rule.limit
    if (allowed) times.push(now)
    return describe(times, allowed, now)
  }

  /**
   * The key's window as it stands, without counting a request: for answers given before the
   * limit is counted (a route-less path, a refused key), which still carry the headers.
   */
  function peek(key: string, now = Date.now()): RateDecision {
    const times = hits.get(key) ?? []
    prune(times, now)
    return describe(times, times.length < rule.limit, now)
  }

  /** Forgets keys with no request inside the window, so idle keys cost nothing. */
  function sweep(now = Date.now()): void {
    for (const [key, times] of hits) {
      prune(times, now)
      if (times.length === 0) hits.delete(key)
    }
  }

  return { check, peek, sweep, get trackedKeys() { return hits.size } }
}

/** A limiter made by createRateLimiter. */
export type RateLimiter = ReturnType<typeof createRateLimiter>
