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

/** Every command of the CLI, in help order. */
export const COMMANDS: CommandEntry[] = [
  {
    name: 'serve',
    usage: '[options]',
    summary: 'serve the whole /api/sandbox partner API locally',
    load: async () => (await import('./commands/serve.js')).registerServe,
  },
  {
    name: 'run',
    usage: '[options] [scenario...]',
    summary: 'run scenarios that walk the loan and repayment flows and check every answer',
    load: async () => (await import('./commands/run.js')).registerRun,
  },
  {
    name: 'logs',
    usage: '[options]',
    summary: 'show the request log that serve keeps per key',
    load: async () => (await import('./commands/logs.js')).registerLogs,
  },
  {
    name: 'openapi',
    usage: '[options]',
    summary: 'print the OpenAPI 3.1 document of the API (also served at /api/sandbox/openapi.json)',
    load: async () => (await import('./commands/openapi.js')).registerOpenApi,
  },
]

/** Command groups, each a folder under commands/. */
export const GROUPS: CommandGroup[] = [
  {
    name: 'webhook',
    description: 'check, receive and sign webhook deliveries',
    commands: [
      {
        name: 'verify',
        usage: '[options] <receiver-url>',
        summary: 'check that a webhook receiver accepts good deliveries and rejects forged, stale and malformed ones',
        load: async () => (await import('./commands/webhook/verify.js')).registerWebhookVerify,
      },
      {
        name: 'listen',
        usage: '[options]',
        summary: 'receive webhook deliveries locally: print each, check its signature, answer 2xx (or --respond)',
        load: async () => (await import('./commands/webhook/listen.js')).registerWebhookListen,
      },
      {
        name: 'sign',
        usage: '[options]',
        summary: 'print the headers that sign a webhook body read from standard input, for curl -H',
        load: async () => (await import('./commands/webhook/sign.js')).registerWebhookSign,
      },
    ],
  },
  {
    name: 'keys',
    description: 'manage registered sandbox API keys (for serve --keys)',
    commands: [
      {
        name: 'create',
        usage: '[options]',
        summary: 'register a new sandbox API key',
        load: async () => (await import('./commands/keys/create.js')).registerKeysCreate,
      },
      {
        name: 'list',
        usage: '[options]',
        summary: 'list registered keys (masked) with their status',
        load: async () => (await import('./commands/keys/list.js')).registerKeysList,
      },
      {
        name: 'revoke',
        usage: '[options] [key]',
        summary: 'revoke a registered key',
        load: async () => (await import('./commands/keys/revoke.js')).registerKeysRevoke,
      },
      {
        name: 'reset',
        usage: '[options] [key]',
        summary: 'give a key a fresh, empty sandbox state (or with --drop, none)',
        load: async () => (await import('./commands/keys/reset.js')).registerKeysReset,
      },
    ],
  },
]
