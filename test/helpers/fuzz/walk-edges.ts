import { ErrorCodes } from '../../../src/errors/codes.js'
import type { WallClock } from '../wall-clock.js'
import { checkStateAgrees, planAnyWrite, sendWrite } from './walk-actions.js'
import type { Walk } from './walk-types.js'

/**
 * Walk steps at the edges of the API: a stray trailing slash, a receiver going down and coming
 * back, and the host's wall clock stepped between requests.
 */

/**
 * A write sent to its path with a trailing slash: 404 NOT_FOUND naming the path without it, no
 * state change, and its Idempotency-Key not stored, so the same key on the right path runs afresh.
 */
export async function sendWithTrailingSlash(walk: Walk, k: number): Promise<void> {
  const { client, random } = walk
  const planned = planAnyWrite(walk, k)
  const idem = client.newIdem()
  walk.models[k]!.used.add(idem)
  const slashes = random.pick(['/', '//'])
  const answer = await client.send(k, planned.method, `${planned.path}${slashes}`, { raw: planned.body === undefined ? undefined : JSON.stringify(planned.body), idem })
  if (answer.status !== ErrorCodes.NOT_FOUND || answer.body?.error_code !== 'NOT_FOUND') client.fail(`k${k}: ${planned.path}${slashes} answered ${answer.status} ${answer.text.slice(0, 300)}`)
  // A loan id such as `..` makes the URL another path, which need not exist: only a path the URL
  // keeps as written is an API path whose name the answer must give.
  else if (new URL(planned.path, 'http://x').pathname === planned.path && !String(answer.body.error).includes(`(${planned.path})`)) client.fail(`k${k}: the 404 of ${planned.path}${slashes} does not name ${planned.path}: ${answer.body.error}`)
  await checkStateAgrees(walk, k, planned.path)
  if (random.chance(0.6)) await sendWrite(walk, k, planned, { idem })
}

/** Takes key `k`'s `/recover` receiver down, or brings it back. */
export function flipReceiver(walk: Walk, k: number): void {
  if (walk.down.has(k)) walk.down.delete(k)
  else walk.down.add(k)
  walk.client.sent.push({ n: walk.client.sent.length, key: k, method: 'RECEIVER', path: walk.down.has(k) ? 'down' : 'up' })
}

const MINUTE = 60_000

/** Steps the wall clock forward or back (as NTP or a resumed VM does), staying within two hours of the real time. */
export function jumpClock(walk: Walk, clock: WallClock, offset: { ms: number }): void {
  let by = walk.random.pick([-60 * MINUTE, -10 * MINUTE, -30_000, -1000, 1000, 30_000, 10 * MINUTE, 60 * MINUTE])
  if (Math.abs(offset.ms + by) > 120 * MINUTE) by = -by
  offset.ms += by
  clock.jump(by)
  walk.clockMoved = true
  walk.client.sent.push({ n: walk.client.sent.length, key: -1, method: 'CLOCK', path: `${by > 0 ? '+' : ''}${by / 1000}s (now ${offset.ms / 1000}s off)` })
}
