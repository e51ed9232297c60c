import { sleep } from '../client/abortable-wait.js'
import type { ClientAnswer } from '../client/request-types.js'

/** How often a step with `until_ms` sends its GET again. */
const UNTIL_INTERVAL_MS = 100

/**
 * Sends until `holds` accepts the answer or `untilMs` has passed (0: once); the last answer. An
 * abort of `signal` ends the wait between two sends, rejecting with its reason.
 */
export async function sendUntil(sendOnce: () => Promise<ClientAnswer>, holds: (answer: ClientAnswer) => boolean, untilMs: number, signal?: AbortSignal): Promise<{ answer: ClientAnswer; sent: number }> {
  const deadline = performance.now() + untilMs
  let answer = await sendOnce()
  let sent = 1
  while (!holds(answer) && performance.now() < deadline) {
    await sleep(UNTIL_INTERVAL_MS, signal)
    answer = await sendOnce()
    sent++
  }
  return { answer, sent }
}
