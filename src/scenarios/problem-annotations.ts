import { basename, extname } from 'node:path'
import { escapeControls } from '../text/escape-controls.js'
import { MAX_GITHUB_ERROR_ANNOTATIONS } from './github-annotations.js'
import { describeProblem, type ScenarioProblem } from './load-scenarios.js'
import { formatWorkflowCommand } from './workflow-command.js'

/**
 * GitHub Actions `::error` workflow commands for scenario files that did not load: one per
 * problem, at the file's PATH (from the workspace; none outside it) and the problem's line, so a
 * pull request shows the mistake where it was typed. At most MAX_GITHUB_ERROR_ANNOTATIONS, the
 * last saying how many more there are.
 */
export function formatProblemAnnotations(problems: ScenarioProblem[], pathOf: (file: string) => string | undefined): string[] {
  const all = problems.map((problem) => {
    const file = pathOf(problem.file)
    const id = basename(problem.file, extname(problem.file))
    return formatWorkflowCommand('error', {
      file,
      line: file === undefined ? undefined : problem.line,
      title: escapeControls(problem.step === undefined ? id : `${id}: step ${problem.step + 1}`),
    }, escapeControls(describeProblem(problem), { keepNewlines: true }))
  })
  if (all.length <= MAX_GITHUB_ERROR_ANNOTATIONS) return all
  const more = all.length - MAX_GITHUB_ERROR_ANNOTATIONS + 1
  return [...all.slice(0, MAX_GITHUB_ERROR_ANNOTATIONS - 1), formatWorkflowCommand('error', { title: 'sandbox run' }, `${more} more problems in scenario files are not annotated (GitHub shows ${MAX_GITHUB_ERROR_ANNOTATIONS} error annotations per step): the log has them all`)]
}
