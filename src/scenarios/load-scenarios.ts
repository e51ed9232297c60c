import { readdir, readFile } from 'node:fs/promises'
import { basename, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findReferences } from './interpolate.js'
import { isMatcher, unknownOperators } from './match-value.js'
import { scenarioSchema, stepKinds, type Scenario, type ScenarioFile } from './scenario-schema.js'

/** Where the scenarios shipped with the package live. */
export const SHIPPED_SCENARIOS_DIR = fileURLToPath(new URL('../../scenarios', import.meta.url))

/** Variables the runner provides to every scenario. */
export const BUILT_IN_VARIABLES = ['$uuid', '$run', '$receiver_url'] as const

/** One mistake in a scenario file, located by file, step and field. */
export interface ScenarioProblem {
  file: string
  step?: number
  field?: string
  message: string
}

/** A scenario file (or several) could not be used; `problems` says where and why. */
export class ScenarioFileError extends Error {
  override name = 'ScenarioFileError'
  constructor(readonly problems: ScenarioProblem[]) {
    super(problems.map(formatProblem).join('\n'))
  }
}

/** `scenarios/x.json: step 3 (start) request.path: must start with /`. */
export function formatProblem(problem: ScenarioProblem): string {
  const where = [problem.step === undefined ? '' : `step ${problem.step + 1}`, problem.field ?? ''].filter(Boolean).join(' ')
  return `${problem.file}: ${where ? `${where}: ` : ''}${problem.message}`
}

function fieldPath(path: PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('')
}

/** The part of a zod issue a problem needs. */
interface SchemaIssue {
  code: string
  path: PropertyKey[]
  message: string
}

const STEP_KEYS = Object.keys(stepKinds) as (keyof typeof stepKinds)[]

function stepIssueProblems(file: string, step: number, issues: SchemaIssue[]): ScenarioProblem[] {
  return issues.map((issue) => ({ file, step, field: fieldPath(issue.path) || undefined, message: issue.message }))
}

/**
 * A step that fits no kind gets only "Invalid input" from the union, without a field. Its key
 * says which kind it meant to be, so that kind's own issues say what is wrong and where.
 */
function unionStepProblems(file: string, index: number, step: unknown, fallback: SchemaIssue): ScenarioProblem[] {
  const kind = STEP_KEYS.find((key) => typeof step === 'object' && step !== null && key in step)
  if (!kind) return [{ file, step: index, message: `a step needs one of ${STEP_KEYS.join(', ')}` }]
  const issues = stepKinds[kind].safeParse(step).error?.issues ?? []
  return stepIssueProblems(file, index, issues.length > 0 ? issues : [{ ...fallback, path: [] }])
}

function schemaProblems(file: string, json: unknown, issue: SchemaIssue): ScenarioProblem[] {
  const [first, index, ...rest] = issue.path
  if (first !== 'steps' || typeof index !== 'number') return [{ file, field: fieldPath(issue.path) || undefined, message: issue.message }]
  if (issue.code === 'invalid_union' && rest.length === 0) {
    return unionStepProblems(file, index, (json as { steps: unknown[] }).steps[index], issue)
  }
  return stepIssueProblems(file, index, [{ ...issue, path: rest }])
}

/** Walks every string and matcher of a value, reporting references and matcher mistakes. */
function visit(value: unknown, at: string, onString: (text: string, at: string) => void, onMatcher: (m: Record<string, unknown>, at: string) => void): void {
  if (typeof value === 'string') onString(value, at)
  else if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${at}[${i}]`, onString, onMatcher))
  else if (value && typeof value === 'object') {
    if (isMatcher(value)) onMatcher(value, at)
    for (const [key, item] of Object.entries(value)) visit(item, `${at}.${key}`, onString, onMatcher)
  }
}

/** Checks what a schema cannot: variables used before capture, unknown keys and matchers. */
function checkReferences(file: string, scenario: ScenarioFile): ScenarioProblem[] {
  const problems: ScenarioProblem[] = []
  const known = new Set<string>(BUILT_IN_VARIABLES)
  const keys = new Set(['main', 'none', ...(scenario.keys ?? [])])
  scenario.steps.forEach((step, index) => {
    const { name: _name, ...rest } = step as Record<string, unknown>
    const capture = (step as { capture?: Record<string, string> }).capture
    visit(rest, '', (text, at) => {
      for (const name of findReferences(text)) {
        if (!known.has(name)) problems.push({ file, step: index, field: at.slice(1), message: `{{${name}}} is not captured by an earlier step` })
      }
    }, (matcher, at) => {
      const unknown = unknownOperators(matcher)
      if (unknown.length > 0) problems.push({ file, step: index, field: at.slice(1), message: `unknown matcher ${unknown.join(', ')}` })
    })
    if ('request' in step && step.request.key && !keys.has(step.request.key)) {
      problems.push({ file, step: index, field: 'request.key', message: `key "${step.request.key}" is not declared in "keys"` })
    }
    if ('replay' in step && index === 0) problems.push({ file, step: index, field: 'replay', message: 'the first step has no request to replay' })
    for (const variable of Object.keys(capture ?? {})) known.add(variable)
  })
  return problems
}

/** Parses and validates one scenario file's text. */
export function parseScenario(file: string, text: string): Scenario {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ScenarioFileError([{ file, message: `not valid JSON: ${(error as Error).message}` }])
  }
  const parsed = scenarioSchema.safeParse(json)
  if (!parsed.success) {
    throw new ScenarioFileError(parsed.error.issues.flatMap((issue) => schemaProblems(file, json, issue)))
  }
  const problems = checkReferences(file, parsed.data)
  if (problems.length > 0) throw new ScenarioFileError(problems)
  return { ...parsed.data, id: basename(file, extname(file)), file }
}

/** Loads every `*.json` scenario of a directory, in id order; all files' mistakes at once. */
export async function loadScenarios(dir: string = SHIPPED_SCENARIOS_DIR): Promise<Scenario[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json') && !name.startsWith('_')).sort()
  const scenarios: Scenario[] = []
  const problems: ScenarioProblem[] = []
  for (const name of names) {
    const file = join(dir, name)
    try {
      scenarios.push(parseScenario(file, await readFile(file, 'utf8')))
    } catch (error) {
      if (error instanceof ScenarioFileError) problems.push(...error.problems)
      else throw error
    }
  }
  if (problems.length > 0) throw new ScenarioFileError(problems)
  return scenarios
}

/** Loads a scenario given as a file path. */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  return parseScenario(path, await readFile(resolve(path), 'utf8'))
}
