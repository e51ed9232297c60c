import type { Command } from 'commander'
import type { ReceiverFlags, resolveReceiverFlags } from './options.js'

/** The flags of `sandbox run`, as commander parses them. */
export interface RunFlags extends ReceiverFlags {
  baseUrl?: string
  apiKey?: string
  startServer?: boolean
  json?: boolean
  junit?: string
  list?: boolean
  bail?: boolean
  tag: string[]
  dir?: string
  wait?: string
  timeout?: string
  verbose?: boolean
  githubReport: boolean
  schema?: boolean
  watch?: boolean
}

/** What a run needs once its flags are checked: each run of `--watch` uses it again. */
export interface RunSetup {
  args: string[]
  flags: RunFlags
  command: Command
  baseUrl?: string
  apiKey?: string
  receiver: ReturnType<typeof resolveReceiverFlags>
  waitForServerMs?: number
  timeoutMs?: number
  /** The proxy the requests go through, as said (password masked). */
  proxy?: string
}
