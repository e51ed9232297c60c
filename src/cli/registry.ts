import type { Command } from 'commander'

/**
 * A command as `--help` lists it, and the module that defines it. The module is loaded only when
 * the command line names the command (citty's lazy subcommands): `sandbox --help` loads none, and
 * `sandbox keys list` loads one. test/unit/cli-registry.test.ts keeps `usage` and `summary` equal
 * to what the modules define.
 */
export interface CommandEntry {
  name: string
  /** What follows the name in the command list: `[options]` and the arguments. */
  usage: string
  summary: string
  load: () => Promise<(parent: Command) => void>
}

/** A command group (`sandbox keys ...`) and its subcommands. */
export interface CommandGroup {
  name: string
  description: string
  commands: CommandEntry[]
}

function command(name: string, usage: string, summary: string, load: CommandEntry['load']): CommandEntry {
  return { name, usage, summary, load }
}

function group(name: string, description: string, commands: CommandEntry[]): CommandGroup {
  return { name, description, commands }
}

/** Every command of the CLI, in help order. */
export const COMMANDS: CommandEntry[] = [
  command('serve', '[options]', 'serve the whole /api/sandbox partner API locally', async () => (await import('./commands/serve.js')).registerServe),
  command('run', '[options] [scenario...]', 'run scenarios that walk the loan and repayment flows and check every answer', async () => (await import('./commands/run.js')).registerRun),
  command('logs', '[options]', 'show the request log that serve keeps per key', async () => (await import('./commands/logs.js')).registerLogs),
  command('openapi', '[options]', 'print the OpenAPI 3.1 document of the API (also served at /api/sandbox/openapi.json)', async () => (await import('./commands/openapi.js')).registerOpenApi),
  command('completion', '[shell]', 'print the completion script for bash, zsh or fish (default the shell $SHELL names)', async () => (await import('./commands/completion.js')).registerCompletion),
]

/** Command groups, each a folder under commands/. */
export const GROUPS: CommandGroup[] = [
  group('webhook', 'register an endpoint; check, receive, trigger, list, retry and sign webhook deliveries', [
    command('verify', '[options] <receiver-url>', 'check that a webhook receiver accepts good deliveries and rejects forged, stale and malformed ones', async () => (await import('./commands/webhook/verify.js')).registerWebhookVerify),
    command('listen', '[options]', 'receive webhook deliveries locally: print each, check its signature, answer 2xx (or --respond)', async () => (await import('./commands/webhook/listen.js')).registerWebhookListen),
    command('trigger', '[options] [event]', 'make a sandbox server send one event type to the key\'s webhook receivers, by walking the API', async () => (await import('./commands/webhook/trigger.js')).registerWebhookTrigger),
    command('register', '[options] <url>', 'register (or update, or enable again) the key\'s webhook endpoint, and print its signing secret when the API gives it', async () => (await import('./commands/webhook/register.js')).registerWebhookRegister),
    command('disable', '[options]', 'disable the key\'s webhook endpoint (DELETE /api/sandbox/webhooks; the log is kept, register enables it again)', async () => (await import('./commands/webhook/disable.js')).registerWebhookDisable),
    command('deliveries', '[options]', 'show the key\'s webhook endpoint and its 50 newest deliveries (GET /api/sandbox/webhooks)', async () => (await import('./commands/webhook/deliveries.js')).registerWebhookDeliveries),
    command('retry', '[options] [delivery-id...]', 'send failed webhook deliveries again (POST /api/sandbox/webhooks/retry), by id or every failed one', async () => (await import('./commands/webhook/retry.js')).registerWebhookRetry),
    command('sign', '[options]', 'print the headers that sign a webhook body read from standard input, for curl -H', async () => (await import('./commands/webhook/sign.js')).registerWebhookSign),
  ]),
  group('keys', 'manage registered sandbox API keys (for serve --keys)', [
    command('create', '[options]', 'register a new sandbox API key', async () => (await import('./commands/keys/create.js')).registerKeysCreate),
    command('list', '[options]', 'list registered keys (masked) with their status', async () => (await import('./commands/keys/list.js')).registerKeysList),
    command('revoke', '[options] [key]', 'revoke a registered key', async () => (await import('./commands/keys/revoke.js')).registerKeysRevoke),
    command('reset', '[options] [key]', 'give a key a fresh, empty sandbox state (or with --drop, none)', async () => (await import('./commands/keys/reset.js')).registerKeysReset),
  ]),
]
