import { stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { CliError } from './cli-error.js'
import { isHttpUrl } from './http-url.js'
import { CliErrorCodes } from '../errors/codes.js'
import type { Scenario } from '../scenarios/scenario-schema.js'

/**
 * The scenarios of `--dir` (or the shipped ones), and those ARGS and TAGS choose from them and
 * from files named by path; a broken file or an unknown id is a CliError (code SCENARIO).
 */
export async function loadChosenScenarios(args: string[], dir: string | undefined, tags: string[]): Promise<{ all: Scenario[]; chosen: Scenario[] }> {
  // Not the scenarios' index: it holds the runner and, through it, the whole server, which
  // listing, picking or refusing scenarios does not need (run --list took 0.9 s instead of 0.3 s).
  const lib = { ...(await import('../scenarios/load-scenarios.js')), ...(await import('../scenarios/select-scenarios.js')) }
  try {
    const all = await lib.loadScenarios(dir ?? lib.SHIPPED_SCENARIOS_DIR)
    if (args.length === 0) return { all, chosen: lib.selectScenarios(all, [], tags) }
    const isFile = lib.isScenarioFilePath
    const known = new Set(all.map((scenario) => scenario.id))
    for (const arg of args) if (!isFile(arg) && !known.has(arg)) await refuseNonScenarioPath(arg)
    // Named scenarios (ids from the directory, or files anywhere), in the order given.
    const byId = new Map(lib.selectScenarios(all, args.filter((arg) => !isFile(arg))).map((scenario) => [scenario.id, scenario]))
    const named = await Promise.all(args.map((arg) => (isFile(arg) ? lib.loadScenarioFile(arg) : byId.get(arg)!)))
    // Reports name scenarios by id: two files with one id could not be told apart. One scenario
    // named twice (by id, or by id and path) runs once, where it was first named.
    const byIdOnce = new Map<string, Scenario>()
    for (const scenario of named) {
      const other = byIdOnce.get(scenario.id)?.file
      if (other !== undefined && resolve(other) !== resolve(scenario.file)) throw new CliError(`${other} and ${scenario.file} are both scenario "${scenario.id}"; rename one (the id is the file name)`)
      if (other === undefined) byIdOnce.set(scenario.id, scenario)
    }
    return { all, chosen: lib.selectScenarios([...byIdOnce.values()], [], tags) }
  } catch (error) {
    // The file error rides along as the cause: GitHub annotations point at its problems' lines.
    if (error instanceof lib.UnknownScenarioError && dir === undefined) throw new CliError(`${error.message} ${await hintOwnScenario(error.ids[0]!)}`, { code: CliErrorCodes.SCENARIO, cause: error })
    if (error instanceof lib.ScenarioFileError || error instanceof lib.UnknownScenarioError) throw new CliError(error.message, { code: CliErrorCodes.SCENARIO, cause: error })
    const { code, path } = error as NodeJS.ErrnoException
    if (code === 'ENOTDIR' && path === dir) throw new CliError(`--dir ${path} is not a directory (give scenario files as arguments, or the directory that holds them)`)
    // A scenario file named as an argument that cannot be read is one that cannot be loaded;
    // --dir is a flag, so a --dir that cannot be read is a usage error.
    const about = path !== undefined && dir !== undefined && resolve(path) === resolve(dir) ? CliErrorCodes.USAGE : CliErrorCodes.SCENARIO
    // The flag named: "no such file or directory: nodir" left the reader to find which one it was.
    if (code === 'ENOENT' && about === CliErrorCodes.USAGE) throw new CliError(`--dir ${path}: no such directory`, { code: about })
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new CliError(`no such file or directory: ${path}`, { code: about })
    if (code === 'EACCES' || code === 'EPERM') throw new CliError(`cannot read ${path}: permission denied`, { code: about })
    throw error
  }
}

/**
 * Refuses ARG, neither a known id nor a `.json` path, when it names something that exists: a
 * directory (`run ./sc`) or a file of another name (`run <(cat x.json)`, a pipe) was told
 * "unknown scenario ./sc" with the ids of another directory, as if the path had not been seen;
 * so is a server URL.
 */
async function refuseNonScenarioPath(arg: string): Promise<void> {
  // `run http://127.0.0.1:4010`, as a test runner takes a target: listing every scenario id said nothing of the flag.
  if (isHttpUrl(arg)) throw new CliError(`${arg} is a URL, not a scenario: give the server to test with --base-url (sandbox run --base-url ${arg})`)
  const found = await stat(arg).catch(() => undefined)
  if (found?.isDirectory()) throw new CliError(`${arg} is a directory: to run the scenarios in it, give --dir ${arg}`)
  if (found) throw new CliError(`${arg} is not a scenario file: give a path ending in .json (a pipe or a file of another name is not read), a scenario id, or --dir for a directory of scenarios`)
}

/**
 * Without --dir the ids known are the shipped ones, not the project's own `scenarios/`, which the
 * README's "a scenario is scenarios/<id>.json" leads a partner to write and then run by id.
 */
async function hintOwnScenario(id: string): Promise<string> {
  const own = join('scenarios', `${id}.json`)
  if (await stat(own).then((found) => found.isFile(), () => false)) return `(the shipped scenarios; yours: ${own} is here, run it as sandbox run ${own} or give --dir scenarios)`
  return "(the shipped scenarios; yours: give a scenario file's path, or --dir for the directory that holds it)"
}
