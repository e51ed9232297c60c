/**
 * The value of environment variable NAME, or undefined when it is unset or empty. Empty counts as
 * unset: a CI system or a compose file sets a variable to "" when what it stands for is not
 * defined (`SANDBOX_HOST: ${{ vars.SANDBOX_HOST }}`). Taken as a value, "" made `serve` listen on
 * every interface (SANDBOX_HOST), keep its files in the current directory (SANDBOX_DATA_DIR) and
 * `keys create` fail to write a file named "" (SANDBOX_KEYS_FILE).
 */
export function readEnv(name: string): string | undefined {
  return process.env[name] || undefined
}

/** A setting's value and where it came from: the flag or the variable's name, for messages. */
export interface Setting {
  value: string | undefined
  source: string
}

/**
 * The value of FLAG when given (`flagValue`), else of environment variable ENV (readEnv). A
 * message about the value names its source: set in a CI job's environment, it is on no command
 * line to look for.
 */
export function readSetting(flagValue: string | undefined, flag: string, env: string): Setting {
  return flagValue !== undefined ? { value: flagValue, source: flag } : { value: readEnv(env), source: env }
}
