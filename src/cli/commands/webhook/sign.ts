import { Option, type Command } from 'commander'
import { CliError, markJsonPrinted, printErrorsAsJson } from '../../cli-error.js'
import { formatJson } from '../../json-text.js'
import { addJsonOption, addSecretOption, resolveSecret } from '../../options.js'

interface SignFlags {
  secret?: string
  timestamp?: string
  json?: boolean
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('pipe the body to sign on standard input: sandbox webhook sign --secret S < body.json')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  if (chunks.length === 0) throw new CliError('standard input is empty; pipe the body to sign: sandbox webhook sign --secret S < body.json')
  return Buffer.concat(chunks).toString('utf8')
}

async function runSign(flags: SignFlags, command: Command): Promise<void> {
  const secret = resolveSecret(flags.secret)
  if (!secret) throw new CliError('missing --secret (or set SANDBOX_WEBHOOK_SECRET)')
  if (flags.timestamp !== undefined && !/^\d{1,12}$/.test(flags.timestamp)) throw new CliError(`--timestamp must be unix seconds, got "${flags.timestamp}"`)
  // Signed byte for byte as read: a trailing newline from an editor is part of the body.
  const body = await readStdin()
  let event: { id?: unknown; type?: unknown }
  try {
    event = JSON.parse(body) as typeof event
  } catch {
    throw new CliError('the body on standard input is not JSON; sign the exact event body you will send')
  }
  if (typeof event.id !== 'string' || typeof event.type !== 'string') throw new CliError('the event body needs string "id" and "type" fields (they go into the x-service-webhook-id and -event headers)')
  const { signWebhook } = await import('../../../webhooks/signature.js')
  const { headers } = signWebhook({ secret, body, eventId: event.id, eventType: event.type, timestamp: flags.timestamp === undefined ? undefined : Number(flags.timestamp) })
  const all = { 'content-type': 'application/json', ...headers }
  if (flags.json) {
    process.stdout.write(`${formatJson(all)}\n`)
    markJsonPrinted(command)
  } else process.stdout.write(Object.entries(all).map(([name, value]) => `${name}: ${value}\n`).join(''))
}

/** `sandbox webhook sign`: the headers for a hand-made delivery (read from stdin). */
export function registerWebhookSign(group: Command): void {
  const command = group
    .command('sign')
    .description('print the headers that sign a webhook body read from standard input, for curl -H')
    .addOption(new Option('--timestamp <unix-seconds>', 'timestamp to sign with (default: now)'))
  addJsonOption(addSecretOption(printErrorsAsJson(command), 'signing secret'), 'print the headers as one JSON object (an error: {"error": {"code", "message"}})')
    .action((flags: SignFlags) => runSign(flags, command))
}
