import { basename, extname } from 'node:path'
import { CliErrorCodes } from '../errors/codes.js'
import type { ScenarioFileError } from '../scenarios/load-scenarios.js'
import type { JunitFileProblems } from '../scenarios/junit-report.js'

/**
 * Writes `run --junit FILE` for a run that could not start with ERROR (a scenario file that does
 * not load, an unknown id or tag, a bad flag), so a CI's test page shows why rather than an
 * earlier run's report or none. A FILE that cannot be written leaves ERROR to be told alone.
 */
export async function writeJunitStartError(file: string, error: unknown): Promise<void> {
  const { describeProblem } = await import('../scenarios/load-scenarios.js')
  const { formatJunitStartError } = await import('../scenarios/junit-report.js')
  const { writeOutputFile } = await import('./output-file.js')
  const cause = (error as Error | undefined)?.cause
  const problems = cause instanceof Error && cause.name === 'ScenarioFileError' ? (cause as ScenarioFileError).problems : []
  const files = new Map<string, JunitFileProblems>()
  for (const problem of problems) {
    const entry = files.get(problem.file) ?? { file: problem.file, id: basename(problem.file, extname(problem.file)), problems: [] }
    entry.problems.push(describeProblem(problem))
    files.set(problem.file, entry)
  }
  // An unknown id is the scenarios' (SCENARIO); a bad flag or a tag no scenario has, usage.
  const type = (error as { code?: string }).code === CliErrorCodes.SCENARIO ? 'ScenarioError' : 'UsageError'
  await writeOutputFile(file, formatJunitStartError((error as Error).message, [...files.values()], new Date(), type), 'the JUnit report').catch(() => {})
}
