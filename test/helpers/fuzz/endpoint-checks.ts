import { objectIdOf } from './event-log.js'
import type { WalkDelivery } from './walk-receiver.js'
import type { Walk } from './walk-types.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * End-of-walk checks of the deliveries to each key's own endpoint: they go out in event order
 * (a retrying delivery holds back the later ones), and a receiver that comes back gets every
 * failed delivery once the retry endpoint puts them back.
 */

/**
 * Per key, the first arrival of each event at its endpoint follows the order its events were
 * forwarded in (the commit order). Only an event the retry endpoint put back may come later.
 */
export function checkEndpointOrder(walk: Walk, got: WalkDelivery[], owner: Map<string, number>): void {
  const { client } = walk
  // Which key an event is of, and where in that key's events: from the forwarded stream (a key may
  // register another key's URL, as the walk replays other keys' requests, so the path does not say).
  const rank = new Map<string, { k: number; at: number }>()
  const counts = walk.models.map(() => 0)
  for (const delivery of got) {
    if (delivery.path !== '/fwd') continue
    const k = owner.get(objectIdOf(delivery.event) ?? '')
    if (k !== undefined) rank.set((delivery.event as any)?.id, { k, at: counts[k]!++ })
  }
  const seen = new Set<string>()
  const latest = walk.models.map(() => ({ at: -1, id: '' }))
  for (const delivery of got) {
    if (!delivery.path.startsWith('/ep/')) continue
    const id = (delivery.event as any)?.id as string
    if (seen.has(id)) continue
    seen.add(id)
    const of = rank.get(id)
    if (of === undefined) {
      client.fail(`event ${id} reached an endpoint (${delivery.path}) but was never forwarded`)
      continue
    }
    const last = latest[of.k]!
    if (of.at < last.at && !walk.models[of.k]!.retried.has(id)) client.fail(`k${of.k}: endpoint got ${id} (event ${of.at} of the key) after ${last.id} (event ${last.at}), and ${id} was never put back by the retry endpoint`)
    if (of.at > last.at) latest[of.k] = { at: of.at, id }
  }
}

/**
 * With every `/recover` receiver up again, retrying what failed delivers it: afterwards the log of
 * a key whose endpoint is a recovered receiver shows no delivery that is not delivered.
 */
export async function checkRecovery(walk: Walk): Promise<void> {
  const { client } = walk
  walk.down.clear()
  for (let k = 0; k < walk.models.length; k++) {
    const endpoint = walk.models[k]!.endpoint
    if (!endpoint?.enabled || !endpoint.url.endsWith('/recover')) continue
    let left: any[] = []
    for (let round = 0; round < 40; round++) {
      const log = (await client.send(k, 'GET', '/api/sandbox/webhooks')).body
      left = (log.deliveries ?? []).filter((d: any) => d.target === 'endpoint' && d.status !== 'delivered')
      if (left.length === 0) break
      if (left.some((d: any) => d.status === 'failed')) {
        for (const d of left) walk.models[k]!.retried.add(d.event_id)
        const answer = await client.send(k, 'POST', '/api/sandbox/webhooks/retry', { raw: '{}', idem: client.newIdem() })
        if (answer.status !== 200) client.fail(`k${k}: retrying every failed delivery to a receiver that is back answered ${answer.status}: ${answer.text.slice(0, 300)}`)
      }
      await client.sandbox.deliveriesIdle()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    if (left.length) client.fail(`k${k}: the receiver is back and every failed delivery was retried, yet ${left.length} are not delivered: ${JSON.stringify(left[0]).slice(0, 400)}`)
  }
}
