/** How to run `npm ARGS` from a script (see npm-command.mjs). */
export function describeNpmCommand(args: string[], options?: { platform?: NodeJS.Platform; env?: NodeJS.ProcessEnv; node?: string }): { file: string; args: string[]; shell: boolean }
