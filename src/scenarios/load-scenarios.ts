import { readdir, readFile, readlink } from 'node:fs/promises'
import { basename, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeDuplicateKey, findDuplicateKeys } from './find-duplicate-keys.js'
import { findStepLines } from './find-step-lines.js'
import { describeMisplacedFields } from './misplaced-fields.js'
import { decodeJsonBytes, describeReadError, JsonTextError, parseJsonText } from '../json-text/read-json-text.js'
import { scenarioFileSchema, scenarioSchema, stepKinds, type Scenario } from './scenario-schema.js'
import { suggestFieldNames } from '../schemas/field-suggestions.js'
import { suggestClosest } from '../text/closest-match.js'

/** Where the scenarios shipped with the package live. */
export const SHIPPED_SCENARIOS_DIR = fileURLToPath(new URL('../../scenarios', import.meta.url))

/** One mistake in a scenario file, located by file, step and field. */
export interface ScenarioProblem {
  file: string
  step?: number
  field?: string
  /** The 1-based line of the step, the JSON error or the first of a key written twice, when known. */
  line?: number
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
  return `${problem.file}: ${describeProblem(problem)}`
}

/** A problem without its file: `step 3 request.path: must start with /`. */
export function describeProblem(problem: ScenarioProblem): string {
  const where = [problem.step === undefined ? '' : `step ${problem.step + 1}`, problem.field ?? ''].filter(Boolean).join(' ')
  return `${where ? `${where}: ` : ''}${problem.message}`
}

function fieldPath(path: PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('')
}

/** The part of a zod issue a problem needs. */
interface SchemaIssue {
  code: string
  path: PropertyKey[]
  message: string
  /** What the key schema said, for an invalid key of a record. */
  issues?: { message: string }[]
  /** The fields no schema has, for an unrecognized_keys issue. */
  keys?: string[]
}

/** A record key's own issue says what a name must be; the record's says only "Invalid key in record". */
function describeIssue(issue: SchemaIssue): string {
  if (issue.code === 'invalid_key' && issue.issues?.[0]) return issue.issues[0].message
  if (issue.code === 'unrecognized_keys' && issue.keys) return `${issue.message}${suggestFieldNames(issue.keys, scenarioFileSchema)}`
  // zod words a field left out as a wrong type ("expected string, received undefined").
  const missing = issue.code === 'invalid_type' ? /^Invalid input: expected (\w+), received undefined$/.exec(issue.message) : null
  if (missing) return `missing (expected ${ARTICLES[missing[1]!] ?? ''}${missing[1]})`
  return issue.message
}

const ARTICLES: Record<string, string> = { string: 'a ', number: 'a ', boolean: 'a ', array: 'an ', object: 'an ' }

const STEP_KEYS = Object.keys(stepKinds) as (keyof typeof stepKinds)[]

function stepIssueProblems(file: string, step: number, issues: SchemaIssue[]): ScenarioProblem[] {
  return issues.map((issue) => {
    const misplaced = issue.code === 'unrecognized_keys' && issue.keys ? describeMisplacedFields(issue.keys, issue.path) : ''
    return { file, step, field: fieldPath(issue.path) || undefined, message: `${describeIssue(issue)}${misplaced}` }
  })
}

/**
 * A step that fits no kind gets only "Invalid input" from the union, without a field. Its key
 * says which kind it meant to be, so that kind's own issues say what is wrong and where.
 */
function unionStepProblems(file: string, index: number, step: unknown, fallback: SchemaIssue): ScenarioProblem[] {
  const kinds = STEP_KEYS.filter((key) => typeof step === 'object' && step !== null && key in step)
  // Checked as the first kind, the second would be called an unknown key, though it is a valid one.
  if (kinds.length > 1) {
    const named = `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}`
    return [{ file, step: index, message: `a step is one of ${STEP_KEYS.join(', ')}, and this one has ${named}: split it into one step each` }]
  }
  const kind = kinds[0]
  if (!kind) {
    const keys = typeof step === 'object' && step !== null ? Object.keys(step) : []
    const meant = keys.map((key) => suggestClosest(key, STEP_KEYS)).find(Boolean) ?? ''
    return [{ file, step: index, message: `a step needs one of ${STEP_KEYS.join(', ')}${meant}` }]
  }
  const issues = stepKinds[kind].safeParse(step).error?.issues ?? []
  return stepIssueProblems(file, index, issues.length > 0 ? issues : [{ ...fallback, path: [] }])
}

function schemaProblems(file: string, json: unknown, issue: SchemaIssue): ScenarioProblem[] {
  const [first, index, ...rest] = issue.path
  if (first !== 'steps' || typeof index !== 'number') return [{ file, field: fieldPath(issue.path) || undefined, message: describeIssue(issue) }]
  if (issue.code === 'invalid_union' && rest.length === 0) {
    return unionStepProblems(file, index, (json as { steps: unknown[] }).steps[index], issue)
  }
  return stepIssueProblems(file, index, [{ ...issue, path: rest }])
}

/** A key written twice: JSON.parse keeps the last, so an expectation written first would never be checked. */
function duplicateKeyProblems(file: string, text: string): ScenarioProblem[] {
  return findDuplicateKeys(text).map((duplicate) => {
    const [first, index, ...rest] = duplicate.path
    const inStep = first === 'steps' && typeof index === 'number'
    return { file, step: inStep ? index : undefined, field: fieldPath(inStep ? rest : duplicate.path), line: duplicate.lines[0], message: describeDuplicateKey(duplicate) }
  })
}

/**
 * Why JSON is no scenario at all (an array, or an object with neither `name` nor `steps`: a
 * fixture or a package.json beside the scenarios), in one line with the way to keep it there,
 * rather than a schema line for each field it lacks; undefined for anything else.
 */
function describeNotScenario(file: string, json: unknown): string | undefined {
  const object = typeof json === 'object' && json !== null && !Array.isArray(json)
  if (object && (Object.hasOwn(json, 'name') || Object.hasOwn(json, 'steps'))) return undefined
  const what = Array.isArray(json) ? 'it is an array, not an object' : object ? 'it has no "name" and no "steps"' : `it is ${json === null ? 'null' : `a ${typeof json}`}, not an object`
  return `is not a scenario (${what}): in a directory of scenarios, start the name of another JSON file with _ (_${basename(file)}), which the run leaves out`
}

/** Parses and validates one scenario file's text. */
export function parseScenario(file: string, text: string): Scenario {
  // Editors on Windows may start a UTF-8 file with a byte order mark, which JSON.parse refuses.
  // Dropped before both parsers, so duplicate keys are found in the same text.
  if (text.startsWith('\uFEFF')) text = text.slice(1)
  let json: unknown
  try {
    json = parseJsonText(text)
  } catch (error) {
    throw new ScenarioFileError([{ file, line: (error as JsonTextError).line, message: (error as Error).message }])
  }
  const notScenario = describeNotScenario(file, json)
  if (notScenario) throw new ScenarioFileError([{ file, message: notScenario }])
  // Both at once: the schema checked only the values JSON.parse kept, so its problems stand too.
  const duplicates = duplicateKeyProblems(file, text)
  const parsed = scenarioSchema.safeParse(json)
  if (!parsed.success) {
    const stepLines = findStepLines(text)
    const problems = parsed.error.issues.flatMap((issue) => schemaProblems(file, json, issue))
    throw new ScenarioFileError([...duplicates, ...problems.map((problem) => ({ ...problem, line: problem.step === undefined ? undefined : stepLines?.[problem.step] }))])
  }
  if (duplicates.length > 0) throw new ScenarioFileError(duplicates)
  return { ...parsed.data, id: basename(file, extname(file)), file }
}

/**
 * Scenario files are JSON; one written in YAML beside them would otherwise be skipped without a
 * word. Other YAML (a compose or CI file) is no scenario: only one with top-level `steps:` counts.
 */
const YAML_FILE = /\.ya?ml$/i
// A byte order mark (a Windows editor's) may come before a first-line `steps:`.
const YAML_SCENARIO = /^\uFEFF?steps\s*:/m
const YAML_REFUSED = 'scenario files are JSON (.json); YAML is not read'

/** Whether a `sandbox run` argument names a scenario file (rather than a scenario id). */
export const isScenarioFilePath = (arg: string): boolean => /\.json$/i.test(arg) || YAML_FILE.test(arg)

/**
 * Whether a file of a scenario directory is left out: `_` by choice; a hidden one is no file the
 * partner wrote (Emacs's lock `.#loan.json`, a dangling link while a buffer is unsaved; macOS's
 * `._loan.json`, binary, on shared drives).
 */
export const isLeftOutName = (name: string): boolean => name.startsWith('_') || name.startsWith('.')

/**
 * Loads every `*.json` scenario of a directory (not those whose name starts with `_` or `.`), in
 * id order; all files' mistakes at once.
 */
export async function loadScenarios(dir: string = SHIPPED_SCENARIOS_DIR): Promise<Scenario[]> {
  const all = (await readdir(dir)).filter((name) => !isLeftOutName(name))
  const names = all.filter((name) => name.toLowerCase().endsWith('.json')).sort()
  const scenarios: Scenario[] = []
  const problems: ScenarioProblem[] = []
  for (const name of all.filter((name) => YAML_FILE.test(name))) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => '')
    if (YAML_SCENARIO.test(text)) problems.push({ file: join(dir, name), message: YAML_REFUSED })
  }
  for (const name of names) {
    const file = join(dir, name)
    try {
      scenarios.push(parseScenario(file, await readScenarioText(file)))
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
  if (YAML_FILE.test(path)) throw new ScenarioFileError([{ file: path, message: YAML_REFUSED }])
  return parseScenario(path, await readScenarioText(path))
}

/**
 * A scenario file's text. Its encoding or a directory in its place is a mistake in that file,
 * told with the others; a missing or unreadable file goes up as the system error, with its path.
 */
async function readScenarioText(file: string): Promise<string> {
  try {
    return decodeJsonBytes(await readFile(resolve(file)))
  } catch (error) {
    if (error instanceof JsonTextError) throw new ScenarioFileError([{ file, line: error.line, message: error.message }])
    const { code } = error as NodeJS.ErrnoException
    if (code === 'EISDIR') throw new ScenarioFileError([{ file, message: `${describeReadError(error)} (a directory of scenarios goes to --dir)` }])
    if (code === 'ELOOP') throw new ScenarioFileError([{ file, message: `cannot be read: ${describeReadError(error)}` }])
    const link = code === 'ENOENT' ? await readlink(file).catch(() => undefined) : undefined
    if (link !== undefined) throw new ScenarioFileError([{ file, message: `is a symbolic link to ${link}, which does not exist` }])
    throw error
  }
}
