/**
 * How to run `npm ARGS` from a script: the npm that runs this script (npm sets npm_execpath to its
 * npm-cli.js) under this node, else `npm` from the PATH. On Windows that is npm.cmd, which Node
 * (since 20.12.2, CVE-2024-27980) refuses to start without a shell: EINVAL.
 * @param {string[]} args
 * @param {{ platform?: NodeJS.Platform, env?: NodeJS.ProcessEnv, node?: string }} [options]
 * @returns {{ file: string, args: string[], shell: boolean }}
 */
export function describeNpmCommand(args, { platform = process.platform, env = process.env, node = process.execPath } = {}) {
  const cli = env.npm_execpath
  // Either separator: path.basename on Linux would not split a Windows path (tested here).
  if (cli && /(?:^|[\\/])npm-cli\.c?js$/.test(cli)) return { file: node, args: [cli, ...args], shell: false }
  // The arguments are this script's own constants, with no character cmd.exe would read.
  if (platform === 'win32') return { file: ['npm.cmd', ...args].join(' '), args: [], shell: true }
  return { file: 'npm', args, shell: false }
}
