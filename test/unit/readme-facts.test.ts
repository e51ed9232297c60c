import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { canPrompt } from '../../src/cli/can-prompt.js'
import { DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_TIMEOUT_MS } from '../../src/client/send-request.js'
import { ConflictReasons, ErrorCodes } from '../../src/errors/codes.js'
import { KEYS_LOCK_TIMEOUT_MS } from '../../src/keys/keys-file-lock.js'
import { DECISIONS } from '../../src/openapi/decisions.js'
import { loadScenarios } from '../../src/scenarios/load-scenarios.js'
import { RUN_MAX_RETRY_AFTER_MS, RUN_TIMEOUT_MS } from '../../src/scenarios/run-scenarios.js'
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../src/scenarios/wait-for-webhook.js'
import { chooseForgetStepMs, MIN_FORGET_IDLE_MS } from '../../src/server/forget-idle-keys.js'
import { CLOSE_CAP_MS } from '../../src/server/listen.js'
import { FORMAT_KEY, STORAGE_FORMAT } from '../../src/storage/storage-format.js'
import { buildSampleEvents } from '../../src/webhook-tools/sample-events.js'
import { buildVerifyBattery } from '../../src/webhook-tools/verify-battery.js'
import { SHARED_REFUSAL_MS } from '../../src/webhooks/recent-refusals.js'
import { DELIVERY_TIMEOUT_MS, MAX_ANSWER_HEADER_BYTES } from '../../src/webhooks/sender.js'
import { KEYS_WOKEN_PER_DESTINATION, MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { spillDeliveries } from '../../src/webhooks/delivery-spill.js'
import type { Delivery } from '../../src/webhooks/types.js'
import { checkWebhookUrl } from '../../src/webhooks/url-policy.js'

// Figures and names the README states, checked against what the code does: prose drifts silently.
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8').replace(/\s+/g, ' ')

describe('the README', () => {
  it('names every error code and every FLOW_CONFLICT reason', () => {
    const names = [...Object.keys(ErrorCodes), ...Object.keys(ConflictReasons)]
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(README))).toEqual([])
  })

  it('says what ErrorCodes and ConflictReasons hold: a code\'s HTTP status, a reason\'s own name', () => {
    // Compared with errorCode, ErrorCodes.FLOW_CONFLICT (409) is silently never equal.
    expect(readNumber(/`ErrorCodes\.FLOW_CONFLICT` is `(\d+)`/)).toBe(ErrorCodes.FLOW_CONFLICT)
    expect(/`ConflictReasons\.STEP_OUT_OF_ORDER` is `'(\w+)'`/.exec(README)?.[1]).toBe(ConflictReasons.STEP_OUT_OF_ORDER)
  })

  it('counts the deliveries webhook verify sends as the battery has them', () => {
    const stated = /That is (\d+) deliveries, one line each/.exec(README)
    expect(stated, 'the README sentence after the list of verify cases').not.toBeNull()
    expect(Number(stated![1])).toBe(buildVerifyBattery('whsec_readme', buildSampleEvents()).length)
  })

  it('gives the backlog size at which a target\'s waiting deliveries move out of the document', () => {
    const stated = /Once a target has (\d+) or more deliveries waiting/.exec(README)
    expect(stated, 'the README sentence on long backlogs').not.toBeNull()
    const threshold = Number(stated![1])
    const waiting = (count: number) => ({
      endpoint: null,
      deliveries: Array.from({ length: count }, (_, seq) => ({ id: `whd_${seq}`, status: seq === 0 ? 'retrying' : 'pending', target: 'endpoint', seq }) as Delivery),
    })
    expect(spillDeliveries(waiting(threshold - 1)).batches).toHaveLength(0)
    expect(spillDeliveries(waiting(threshold)).batches).toHaveLength(1)
  })

  it('lists every host name suffix the URL rule refuses, and the length limit', async () => {
    const rule = /\*\*URL rule\.\*\*(.*?)\*\*Delivery\.\*\*/.exec(README)![1]!
    for (const name of ['localhost', 'a.localhost', 'a.local', 'a.internal', 'a.localdomain', 'a.home.arpa']) {
      const refused = await checkWebhookUrl(`https://${name}/hook`, { allowLocal: false, resolve: async () => ['203.0.113.1'] }).then(() => null, (error: { details?: { reason?: string } }) => error.details?.reason)
      expect([name, refused]).toEqual([name, 'local_name'])
      expect(rule, name).toContain(`\`${name.replace(/^a\./, '.')}\``)
    }
    const limit = Number(/at most ([\d,]+) characters/.exec(rule)![1]!.replace(',', ''))
    const long = (length: number) => `https://hooks.partner.example/${'a'.repeat(length - 'https://hooks.partner.example/'.length)}`
    const publicHost = { allowLocal: false, resolve: async () => ['8.8.8.8'] }
    await expect(checkWebhookUrl(long(limit), publicHost)).resolves.toBeInstanceOf(URL)
    await expect(checkWebhookUrl(long(limit + 1), publicHost)).rejects.toMatchObject({ details: { reason: 'too_long' } })
  })

  /** The number in the first match of PATTERN (a README sentence), which must be there. */
  function readNumber(pattern: RegExp): number {
    const found = pattern.exec(README)
    expect(found, String(pattern)).not.toBeNull()
    return Number(found![1]!.replace(/,/g, ''))
  }

  it('gives the deliveries in flight per destination and the keys woken at a time, as the code and the OpenAPI document have them', () => {
    expect(readNumber(/At most (\d+) deliveries are in flight to one destination/)).toBe(MAX_IN_FLIGHT_PER_DESTINATION)
    expect(readNumber(/Deliveries beyond the (\d+) wait their turn/)).toBe(MAX_IN_FLIGHT_PER_DESTINATION)
    expect(readNumber(/more than (\d+) to one receiver/)).toBe(MAX_IN_FLIGHT_PER_DESTINATION)
    expect(readNumber(/due, (\d+) per destination at a time/)).toBe(KEYS_WOKEN_PER_DESTINATION)
    expect(readNumber(/their (\d+) s start when they are sent/)).toBe(DELIVERY_TIMEOUT_MS / 1000)
    expect(DECISIONS).toContain(`at most ${MAX_IN_FLIGHT_PER_DESTINATION} deliveries in flight to one destination`)
  })

  it('gives the stop\'s cap, the run\'s and the client\'s timeouts and Retry-After caps, and wait_for_webhook\'s default', () => {
    expect(readNumber(/webhook deliveries finish \(up to (\d+) s;/)).toBe(CLOSE_CAP_MS / 1000)
    expect(readNumber(/`docker stop` waits (\d+) s before it kills, the same as the stop's own cap/)).toBe(CLOSE_CAP_MS / 1000)
    expect(readNumber(/`closeTimeoutMs` \((\d+) s\)/)).toBe(CLOSE_CAP_MS / 1000)
    expect(readNumber(/\| `(\d+)s`: how long one attempt of a request may take/)).toBe(RUN_TIMEOUT_MS / 1000)
    expect(readNumber(/an attempt may take (\d+) s\s+\(`--timeout`\) rather than (?:\d+) s/)).toBe(RUN_TIMEOUT_MS / 1000)
    expect(readNumber(/\(`--timeout`\) rather than (\d+) s/)).toBe(DEFAULT_TIMEOUT_MS / 1000)
    expect(readNumber(/waited for up to (\d+) minutes rather than (?:\d+) s/) * 60_000).toBe(RUN_MAX_RETRY_AFTER_MS)
    expect(readNumber(/waited for up to \d+ minutes rather than (\d+) s/)).toBe(DEFAULT_MAX_RETRY_AFTER_MS / 1000)
    expect(readNumber(/`timeoutMs`, (\d+) s by default/)).toBe(DEFAULT_TIMEOUT_MS / 1000)
    expect(readNumber(/capped at `maxRetryAfterMs` \((\d+) s by default/)).toBe(DEFAULT_MAX_RETRY_AFTER_MS / 1000)
    expect(readNumber(/`wait_for_webhook`'s `timeout_ms` \((\d+) s by default\)/)).toBe(DEFAULT_WEBHOOK_TIMEOUT_MS / 1000)
    expect(readNumber(/And for (\d+) ms after a connection/)).toBe(SHARED_REFUSAL_MS)
  })

  it('lists the shipped scenarios, the local-only ones last, and counts the others as they are', async () => {
    const scenarios = await loadScenarios()
    const listed = [.../The shipped scenarios: (.*?)\. The last/.exec(README)![1]!.matchAll(/`([\w-]+)`/g)].map((match) => match[1]!)
    expect([...listed].sort()).toEqual(scenarios.map((scenario) => scenario.id).sort())
    const localOnly = scenarios.filter((scenario) => scenario.tags.includes('local-only')).map((scenario) => scenario.id)
    const words = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen']
    const lastWord = /The last (\w+) are tagged `local-only`/.exec(README)![1]!
    expect(listed.slice(-(words.indexOf(lastWord) + 1)).sort()).toEqual(localOnly.sort())
    const othersWord = /One run of the (\w+) that are not `local-only`/.exec(README)![1]!
    expect(words.indexOf(othersWord) + 1).toBe(scenarios.length - localOnly.length)
  })

  it('puts the API\'s refusal of a webhook command\'s argument under USAGE, exit 2, in the --json codes table (test/e2e/webhook-endpoint checks the CLI)', () => {
    const usage = /\| `USAGE` \|([^|]*)\| (\d) \|/.exec(README)
    expect(usage).not.toBeNull()
    expect([usage![1], usage![2]]).toEqual([expect.stringMatching(/`webhook register`'s URL .*`webhook retry`'s unknown or delivered id .*`webhook disable` with no endpoint/), '2'])
  })

  it('gives --forget-idle-keys\'s shortest duration and its step, as the sweeps use them', () => {
    const HOUR = 3_600_000
    expect(readNumber(/DURATION \(`12h`, `7d`; at least `(\d+)h`\)/) * HOUR).toBe(MIN_FORGET_IDLE_MS)
    expect(readNumber(/\*\*At least `(\d+)h`\*\*/) * HOUR).toBe(MIN_FORGET_IDLE_MS)
    expect(README).toContain('every step (a quarter of DURATION, at most an hour)')
    expect([chooseForgetStepMs(2 * HOUR), chooseForgetStepMs(4 * HOUR), chooseForgetStepMs(7 * 24 * HOUR)]).toEqual([HOUR / 2, HOUR, HOUR])
    expect(readNumber(/\(for `7d`: up to (\d+) hours later\)/) * HOUR).toBe(2 * chooseForgetStepMs(7 * 24 * HOUR))
  })

  it('gives how much of a receiver\'s answer headers a delivery reads', () => {
    expect(readNumber(/answer's headers are read up to (\d+) MiB/) * 1024 * 1024).toBe(MAX_ANSWER_HEADER_BYTES)
  })

  it('gives how long a keys command waits for another one\'s lock on the keys file', () => {
    expect(readNumber(/waits up to (\d+) s for another's lock/)).toBe(KEYS_LOCK_TIMEOUT_MS / 1000)
  })

  it('names the storage-format marker as fs and redis store it, with this version\'s format', () => {
    expect(README).toContain(`the file \`${FORMAT_KEY}\` in the data dir, the key \`sandbox:${FORMAT_KEY}\` in redis`)
    expect(readNumber(/\(`\{"format": (\d+),/)).toBe(STORAGE_FORMAT)
  })

  it('tells which values of CI count as a CI job, as the prompts decide', () => {
    expect(README).toContain('(`CI` set to anything but empty, `false` or `0`,')
    const stdin = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY')
    const stdout = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY')
    Object.defineProperty(process.stdin, 'isTTY', { value: true, configurable: true })
    Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true })
    try {
      const prompts = (ci: string | undefined) => canPrompt(ci === undefined ? {} : { CI: ci })
      expect([undefined, '', 'false', '0'].map(prompts)).toEqual([true, true, true, true])
      expect(['true', '1', 'yes'].map(prompts)).toEqual([false, false, false])
    } finally {
      for (const [stream, descriptor] of [[process.stdin, stdin], [process.stdout, stdout]] as const) {
        if (descriptor) Object.defineProperty(stream, 'isTTY', descriptor)
        else delete (stream as { isTTY?: boolean }).isTTY
      }
    }
  })
})
