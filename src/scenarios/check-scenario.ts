import type { z } from 'zod'
import { findClosestMatch, suggestClosest } from '../text/closest-match.js'
import { EVENT_TYPES, findEventType, findEventTypeMeant } from '../domain/event-types.js'
import { findReferences, isWholeReference } from './interpolate.js'
import { parsePath } from './json-path.js'
import { findInertMatchers } from './inert-matchers.js'
import { findMatcherProblems, isMatcher } from './match-value.js'
import type { ScenarioFile } from './scenario-schema.js'
import { SubscribedEvents } from './subscribed-events.js'

/** Variables the runner provides to every scenario. */
export const BUILT_IN_VARIABLES = ['$uuid', '$run', '$receiver_url'] as const

const NO_RECEIVER_SENT = 'no earlier step sends {{$receiver_url}}, the runner\'s receiver (a URL of its own for each run of the scenario), so no delivery can reach this wait: register it first, e.g. POST /api/sandbox/webhooks with {"url": "{{$receiver_url}}"}'

type Path = (string | number)[]
type Report = (path: Path, message: string) => void

/** Every string of a value, object keys included (an expected body path can hold a variable too). */
function visitStrings(value: unknown, path: Path, onString: (text: string, path: Path) => void): void {
  if (typeof value === 'string') onString(value, path)
  else if (Array.isArray(value)) value.forEach((item, i) => visitStrings(item, [...path, i], onString))
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      onString(key, [...path, key])
      visitStrings(item, [...path, key], onString)
    }
  }
}

/** A body path as the runner will read it; a variable stands for a segment, index or filter value here. */
function checkBodyPath(text: string, path: Path, report: Report): void {
  const sample = text.replace(/\{\{[^}]*\}\}/g, '0')
  try {
    parsePath(sample)
  } catch (error) {
    report(path, sample === text ? (error as Error).message : `cannot read the path "${text}"`)
  }
}

/**
 * A type no event has would only show at the run, as a wait that times out (or a delivery of
 * another type); one from a variable is known only then.
 */
function checkEventType(type: string, path: Path, report: Report): void {
  if (type.includes('{{') || findEventType(type)) return
  const meant = findEventTypeMeant(type)
  report(path, `unknown event type "${type}"${meant === undefined ? `: one of ${EVENT_TYPES.join(', ')}` : ` (did you mean ${meant}?)`}`)
}

/** The variables so far: each capture with its body path (none for the built-ins). */
type Known = Map<string, string | undefined>

/** ` (did you mean {{loanId}}?)` for a name one typo from one of `names`. */
function suggestVariable(name: string, names: Iterable<string>): string {
  const match = findClosestMatch(name, [...names])
  return match === undefined ? '' : ` (did you mean {{${match}}}?)`
}

function describeUnknownVariable(name: string, known: Known, captures: Map<string, number>, step: number): string {
  if (name.startsWith('$')) return `{{${name}}} is not a built-in variable (${BUILT_IN_VARIABLES.join(', ')})${suggestVariable(name, BUILT_IN_VARIABLES)}`
  const dot = name.indexOf('.')
  const base = name.slice(0, dot)
  if (dot > 0 && known.has(base)) {
    // {{loan.id}} is looked up as one variable named "loan.id": "not captured" alone would
    // contradict the capture of "loan" the writer can see.
    const rest = name.slice(dot + 1)
    const variable = `${base}_${rest.replace(/\W/g, '_')}`
    return `{{${name}}} reads a field of the capture "${base}", which is not supported (a capture is one whole value): capture the field itself, e.g. "${variable}": "${known.get(base)}.${rest}", and use {{${variable}}}`
  }
  const capturedBy = captures.get(name)
  if (capturedBy === step) return `{{${name}}} is captured by this step, from its answer: the steps after it can use it`
  if (capturedBy !== undefined) return `{{${name}}} is captured only later, by step ${capturedBy + 1}: a step can use what the steps before it captured`
  return `{{${name}}} is not captured by an earlier step${suggestVariable(name, [...known.keys()].filter((variable) => !variable.startsWith('$')))}`
}

/** Each variable's first capture, by step index. */
function findCaptures(scenario: ScenarioFile): Map<string, number> {
  const captures = new Map<string, number>()
  scenario.steps.forEach((step, index) => {
    for (const variable of Object.keys(('capture' in step ? step.capture : undefined) ?? {})) if (!captures.has(variable)) captures.set(variable, index)
  })
  return captures
}

/**
 * What a schema alone cannot check in a scenario file: variables used before they are captured,
 * undeclared keys, matchers (their operands, and ones that would not be applied), body paths, and
 * a replay with nothing before it.
 */
export function checkScenario(scenario: ScenarioFile, report: Report): void {
  const known: Known = new Map(BUILT_IN_VARIABLES.map((name) => [name, undefined]))
  const keys = new Set(['main', 'none', ...(scenario.keys ?? [])])
  const captures = findCaptures(scenario)
  let receiverSent = false
  const subscribed = new SubscribedEvents()
  scenario.steps.forEach((step, index) => {
    const at = (...rest: Path): Path => ['steps', index, ...rest]
    const { name: _name, ...rest } = step as Record<string, unknown>
    visitStrings(rest, at(), (text, path) => {
      for (const name of findReferences(text)) if (!known.has(name)) report(path, describeUnknownVariable(name, known, captures, index))
    })
    const expect = 'expect' in step ? step.expect : undefined
    for (const part of ['body', 'headers'] as const) {
      for (const [key, value] of Object.entries(expect?.[part] ?? {})) {
        if (part === 'body') checkBodyPath(key, at('expect', part, key), report)
        // Only the whole value at a path is applied as a matcher; one anywhere else is refused.
        if (isMatcher(value)) for (const problem of findMatcherProblems(value, isWholeReference)) report(at('expect', part, key), problem)
        for (const problem of findInertMatchers(key, value)) report(at('expect', part, key), problem)
      }
    }
    const capture = 'capture' in step ? step.capture : undefined
    for (const [variable, path] of Object.entries(capture ?? {})) checkBodyPath(path, at('capture', variable), report)
    if ('request' in step && step.request.key && !keys.has(step.request.key)) {
      report(at('request', 'key'), `key "${step.request.key}" is not declared in "keys"${suggestClosest(step.request.key, [...keys])}`)
    }
    if ('replay' in step && index === 0) report(at('replay'), 'the first step has no request to replay')
    if ('wait_for_webhook' in step) checkEventType(step.wait_for_webhook.type, at('wait_for_webhook', 'type'), report)
    const unsubscribed = 'wait_for_webhook' in step ? subscribed.explainMissing(step.wait_for_webhook.type) : undefined
    if (unsubscribed) report(at('wait_for_webhook', 'type'), unsubscribed)
    subscribed.track(step, index)
    // Each run of a scenario has a receiver URL of its own: a wait before a step sent it would time out.
    if ('wait_for_webhook' in step && !receiverSent) report(at('wait_for_webhook'), NO_RECEIVER_SENT)
    if ('request' in step && JSON.stringify(step.request).includes('{{$receiver_url}}')) receiverSent = true
    for (const [variable, path] of Object.entries(capture ?? {})) known.set(variable, path)
  })
}

/** checkScenario as a zod refinement of the whole file. */
export function refineScenario(scenario: ScenarioFile, ctx: z.RefinementCtx): void {
  checkScenario(scenario, (path, message) => ctx.addIssue({ code: 'custom', path, message }))
}
