import { hasUndelivered } from '../webhooks/waiting-deliveries.js'
import { OPEN_SESSION_ID } from './auth.js'
import type { KeyUse } from './key-use.js'
import type { KeyedMutexLike } from './services.js'
import { startRepeatingSweep, type RepeatingSweep } from './repeating-sweep.js'
import { principalOfSlot } from './session-doc.js'
import type { SessionStore } from './session-store.js'

export { MIN_FORGET_IDLE_MS } from './forget-idle-limits.js'

/** Sweeps come at least this often, and a key's use is stored at least this often while it is used. */
const MAX_FORGET_STEP_MS = 60 * 60 * 1000

/** How often keys are checked, and how stale a key's stored use may be: a quarter of the idle time, at most an hour. */
export function chooseForgetStepMs(idleMs: number): number {
  return Math.max(1, Math.min(MAX_FORGET_STEP_MS, Math.floor(idleMs / 4)))
}

/** Keys looked at between two yields to the event loop. */
const KEYS_PER_TURN = 100

/** What a sweep of idle keys uses. */
export interface ForgetIdleOptions {
  idleMs: number
  sessions: Pick<SessionStore, 'listSlots' | 'listBatches' | 'readIdle' | 'forget'>
  keyUse: KeyUse
  mutex: KeyedMutexLike
}

/**
 * Forgets every open-mode key not used for longer than `idleMs` at `now`: its session document,
 * idempotency batches, spilled deliveries and stored use. Returns how many. Only keys whose last
 * use this server does not know are read from storage (all of them at the first sweep after a
 * start); a key with events or webhook deliveries still to send is kept until they are done.
 */
export async function forgetIdleKeys(options: ForgetIdleOptions, now = Date.now(), stopped: () => boolean = () => false): Promise<number> {
  const { keyUse } = options
  // Sessions of registered keys (a data dir once served with --keys) are never this sweep's.
  const isOpen = (slot: string) => slot.endsWith(`:${OPEN_SESSION_ID}`)
  const slots = new Set([...await options.sessions.listSlots(), ...await keyUse.listSlots()].filter(isOpen))
  let forgotten = 0
  let passed = 0
  // Listed once, when the first idle key is found: listing them for each key made a sweep of
  // 8,000 keys on redis take 3.5 minutes (a SCAN of the whole database per listing). A batch is
  // written only by a request of its key, and a key used after this listing is not forgotten.
  let batches: Promise<Map<string, string[]>> | undefined
  const batchesOf = async (slot: string) => (await (batches ??= options.sessions.listBatches())).get(slot) ?? []
  for (const slot of slots) {
    if (stopped()) break
    // Memory storage answers without I/O: thousands of keys in one go would hold up every request.
    if (++passed % KEYS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
    let last = keyUse.lastUse(slot)
    if (last === undefined) {
      const stored = await keyUse.readStored(slot).catch(() => null)
      if (stored === null) continue
      // State stored before uses were recorded (an earlier version, or serve without the flag)
      // counts as used now: it is kept for the whole idle time from here.
      if (stored === undefined) {
        await keyUse.stamp(slot, now).catch(() => {})
        continue
      }
      last = keyUse.lastUse(slot)!
    }
    if (last + options.idleMs >= now) continue
    const gone = await options.mutex.run(slot, () => forgetIfIdle(options, slot, now, batchesOf)).catch(() => false)
    if (gone) forgotten++
    await new Promise((resolve) => setImmediate(resolve))
  }
  return forgotten
}

async function forgetIfIdle(options: ForgetIdleOptions, slot: string, now: number, batchesOf: (slot: string) => Promise<string[]>): Promise<boolean> {
  // A request may have come while the sweep waited for the key's mutex.
  const seen = options.keyUse.lastUse(slot)
  if (seen !== undefined && seen + options.idleMs >= now) return false
  const principal = principalOfSlot(slot)
  // A document this version cannot read (a newer one's) is left alone, like the rest of its key.
  const doc = await options.sessions.readIdle(principal)
  if (doc === 'busy') return false
  // "No event lost": deliveries still pending or retrying are sent or fail first.
  if (doc && (doc.outbox.length > 0 || hasUndelivered(doc.webhook))) return false
  await options.sessions.forget(principal, await batchesOf(slot))
  // Last: a crash before it leaves the key listed, and the next sweep finishes the job.
  await options.keyUse.remove(slot, seen)
  return true
}

/**
 * Runs `forgetIdleKeys` at `firstMs` after the start and then every `chooseForgetStepMs(idleMs)`,
 * telling `onForgotten` how many keys each sweep that forgot any forgot.
 */
export function startForgettingIdleKeys(options: ForgetIdleOptions & { firstMs: number; onForgotten?: (count: number) => void; logError: (error: unknown) => void }): RepeatingSweep {
  const sweep = (stopped: () => boolean) => forgetIdleKeys(options, Date.now(), stopped)
    .then((count) => { if (count > 0) options.onForgotten?.(count) })
    .catch(options.logError)
  return startRepeatingSweep(sweep, options.firstMs, chooseForgetStepMs(options.idleMs))
}
