import { appendFile, readFile, realpath } from 'node:fs/promises'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { findStepLines } from '../scenarios/find-step-lines.js'
import { formatGithubAnnotations, type ScenarioLocation } from '../scenarios/github-annotations.js'
import { formatGithubSummary } from '../scenarios/github-summary.js'
import type { ScenarioProblem } from '../scenarios/load-scenarios.js'
import { formatProblemAnnotations } from '../scenarios/problem-annotations.js'
import type { RunReport } from '../scenarios/report-types.js'

/**
 * FILE's path from WORKSPACE with `/` separators (both real paths), or undefined when it is not
 * in the workspace's own files: outside it, or in a `node_modules` (the shipped scenarios), which
 * a pull request's annotations cannot point into.
 */
export function findWorkspacePath(file: string, workspace: string): string | undefined {
  const path = relative(workspace, file)
  if (path === '' || isAbsolute(path) || path.split(sep).some((part) => part === '..' || part === 'node_modules')) return undefined
  return path.split(sep).join('/')
}

const real = (path: string) => realpath(path).catch(() => resolve(path))

async function locateScenarios(report: RunReport, workspace: string): Promise<Map<string, ScenarioLocation>> {
  const root = await real(workspace)
  const locations = new Map<string, ScenarioLocation>()
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'failed' || locations.has(scenario.file)) continue
    const file = await real(scenario.file)
    const path = findWorkspacePath(file, root)
    // Read again, as it is now: a file that changed since it was loaded gets no line (step counts differ).
    const text = path === undefined ? undefined : await readFile(file, 'utf8').catch(() => undefined)
    locations.set(scenario.file, { path, stepLines: text === undefined ? undefined : findStepLines(text) })
  }
  return locations
}

/**
 * Under GitHub Actions (`GITHUB_ACTIONS=true`): an `::error` workflow command per failed step
 * (on stderr with `--json`, whose stdout holds only the report; the runner reads both), and the
 * run's Markdown summary appended to `GITHUB_STEP_SUMMARY`. A summary that cannot be written is
 * a warning: the run's result stands.
 */
export async function reportToGithub(report: RunReport, options: { json?: boolean; stopMessage?: string }): Promise<void> {
  if (process.env.GITHUB_ACTIONS !== 'true') return
  const locations = await locateScenarios(report, process.env.GITHUB_WORKSPACE || process.cwd())
  const stream = options.json ? process.stderr : process.stdout
  for (const line of formatGithubAnnotations(report, { locations, stopMessage: options.stopMessage })) stream.write(`${line}\n`)
  const summaryFile = process.env.GITHUB_STEP_SUMMARY
  if (!summaryFile) return
  // Appended, never replaced: the job's other steps and commands write to this file too.
  await appendFile(summaryFile, `\n${formatGithubSummary(report)}`).catch((error: NodeJS.ErrnoException) => {
    process.stderr.write(`sandbox: warning: cannot write the job summary to ${summaryFile} (GITHUB_STEP_SUMMARY): ${error.message}\n`)
  })
}

/**
 * Under GitHub Actions: an `::error` workflow command per problem of the scenario files that did
 * not load, at the file and line (on stderr with `--json`), before the run exits 2 with them.
 */
export async function reportProblemsToGithub(problems: ScenarioProblem[], options: { json?: boolean }): Promise<void> {
  if (process.env.GITHUB_ACTIONS !== 'true') return
  const root = await real(process.env.GITHUB_WORKSPACE || process.cwd())
  const paths = new Map<string, string | undefined>()
  for (const { file } of problems) if (!paths.has(file)) paths.set(file, findWorkspacePath(await real(file), root))
  const stream = options.json ? process.stderr : process.stdout
  for (const line of formatProblemAnnotations(problems, (file) => paths.get(file))) stream.write(`${line}\n`)
}
