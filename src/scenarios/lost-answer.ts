import type { ClientAnswer } from '../client/request-types.js'
import type { StepFailure } from './report-types.js'

const REPLAYED = 'body.idempotency_replayed'

/**
 * The failures of a step whose first answer was lost, without the one that loss explains. The
 * client sent the request again with the same Idempotency-Key (a dropped connection, a proxy's
 * 502), so the server answered with the stored answer, `idempotency_replayed: true`, where the
 * scenario expects `false` of a first execution: the spec's retry rule at work, not a fault of
 * the server. LOST: whether an earlier attempt ended with no answer of the server's (a network
 * error, a proxy's 502/503/504), which may have been carried out; a 429 refused it before acting,
 * so the request resent after one must still say false. Undefined when there is nothing to
 * excuse: a single attempt still has to say false.
 */
export function excuseReplayOfLostAnswer(failures: readonly StepFailure[], answer: Pick<ClientAnswer, 'attempts' | 'body'>, lost: boolean): StepFailure[] | undefined {
  if (!lost || answer.attempts < 2 || (answer.body as { idempotency_replayed?: unknown } | undefined)?.idempotency_replayed !== true) return undefined
  const rest = failures.filter((failure) => !(failure.field === REPLAYED && failure.expected === false && failure.actual === true))
  return rest.length < failures.length ? rest : undefined
}
