import type { Command } from 'commander'
import { registerKeysCreate } from './commands/keys/create.js'
import { registerKeysList } from './commands/keys/list.js'
import { registerKeysReset } from './commands/keys/reset.js'
import { registerKeysRevoke } from './commands/keys/revoke.js'
import { registerLogs } from './commands/logs.js'
import { registerOpenApi } from './commands/openapi.js'
import { registerRun } from './commands/run.js'
import { registerServe } from './commands/serve.js'
import { registerWebhookListen } from './commands/webhook/listen.js'
import { registerWebhookSign } from './commands/webhook/sign.js'
import { registerWebhookVerify } from './commands/webhook/verify.js'

/** A command group (`sandbox keys ...`) and the subcommands registered under it. */
interface CommandGroup {
  name: string
  description: string
  commands: Array<(group: Command) => void>
}

/**
 * Every command of the CLI, in help order. A command file registers its flags and lazily imports
 * what it runs, so `sandbox --help` loads none of the server.
 */
export const COMMANDS: Array<(program: Command) => void> = [registerServe, registerRun, registerLogs, registerOpenApi]

/** Command groups, each a folder under commands/. */
export const GROUPS: CommandGroup[] = [
  { name: 'webhook', description: 'check, receive and sign webhook deliveries', commands: [registerWebhookVerify, registerWebhookListen, registerWebhookSign] },
  { name: 'keys', description: 'manage registered sandbox API keys (for serve --keys)', commands: [registerKeysCreate, registerKeysList, registerKeysRevoke, registerKeysReset] },
]
