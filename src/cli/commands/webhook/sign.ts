import { fstatSync } from 'node:fs'
import { Option, type Command } from 'commander'
import { CliError, printJsonDocument, printErrorsAsJson } from '../../cli-error.js'
import { addJsonOption, addSecretOption, resolveSecret } from '../../options.js'
import { hintExcessArgument } from '../../usage-hints.js'

interface SignFlags {
  secret?: string
  timestamp?: string
  json?: boolean
}

async function readStdin(): Promise<Buffer> {
  if (process.stdin.isTTY) throw new CliError('pipe the body to sign on standard input: sandbox webhook sign --secret S < body.json')
  // Read as a stream, a directory gives no bytes and no error: it would be called empty.
  if (fstatSync(0).isDirectory()) throw new CliError('standard input is a directory, not a file; pipe the body to sign: sandbox webhook sign --secret S < body.json')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  if (chunks.length === 0) throw new CliError('standard input is empty; pipe the body to sign: sandbox webhook sign --secret S < body.json')
  return Buffer.concat(chunks)
}

/**
 * The body as text whose UTF-8 bytes are exactly the bytes read, as the signature must cover
 * what curl --data-binary sends. Bytes that are not UTF-8 were read as U+FFFD and signed as
 * such: a signature no receiver could match. A byte order mark is refused, not dropped: curl
 * would send it, and a receiver's JSON parser refuses it.
 */
async function readBody(bytes: Buffer): Promise<{ body: string; event: { id?: unknown; type?: unknown } }> {
  const { decodeJsonBytes, parseJsonText } = await import('../../../json-text/read-json-text.js')
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new CliError('the body on standard input starts with a UTF-8 byte order mark (Notepad adds one): curl would send it and a receiver\'s JSON parser refuses it; save the file as UTF-8 without a BOM')
  }
  try {
    const body = decodeJsonBytes(bytes)
    return { body, event: parseJsonText(body) as { id?: unknown; type?: unknown } }
  } catch (error) {
    throw new CliError(`the body on standard input ${(error as Error).message.replace(/^not valid JSON/, 'is not valid JSON')}; sign the exact event body you will send`)
  }
}

/**
 * Unix seconds, as the spec signs them. Thirteen digits are milliseconds (Date.now(), JavaScript's
 * habit): said so, with the seconds to pass, rather than a bare "must be seconds".
 */
function checkTimestamp(value: string): void {
  if (/^\d{1,12}$/.test(value)) return
  const millis = /^\d{13}$/.test(value) ? `, which is milliseconds (Date.now()): pass ${value.slice(0, 10)}` : ''
  throw new CliError(`--timestamp must be unix seconds, got "${value}"${millis}`)
}

async function runSign(flags: SignFlags, command: Command): Promise<void> {
  const secret = resolveSecret(flags.secret)
  if (!secret) throw new CliError('missing --secret (or set SANDBOX_WEBHOOK_SECRET)')
  if (flags.timestamp !== undefined) checkTimestamp(flags.timestamp)
  // Signed byte for byte as read: a trailing newline from an editor is part of the body.
  const { body, event } = await readBody(await readStdin())
  if (typeof event.id !== 'string' || typeof event.type !== 'string') throw new CliError('the event body needs string "id" and "type" fields (they go into the x-service-webhook-id and -event headers)')
  const { signWebhook } = await import('../../../webhooks/signature.js')
  const { headers } = signWebhook({ secret, body, eventId: event.id, eventType: event.type, timestamp: flags.timestamp === undefined ? undefined : Number(flags.timestamp) })
  const all = { 'content-type': 'application/json', ...headers }
  if (flags.json) {
    printJsonDocument(command, all)
  } else process.stdout.write(Object.entries(all).map(([name, value]) => `${name}: ${value}\n`).join(''))
}

/** `sandbox webhook sign`: the headers for a hand-made delivery (read from stdin). */
export function registerWebhookSign(group: Command): void {
  const command = group
    .command('sign')
    .description('print the headers that sign a webhook body read from standard input, for curl -H')
    .addOption(new Option('--timestamp <unix-seconds>', 'timestamp to sign with (default now)'))
  // `sign event.json` is the likely mistake: the body comes on standard input.
  hintExcessArgument(command, (file) => `the body is read from standard input: sandbox webhook sign [options] < ${file}`)
  addJsonOption(addSecretOption(printErrorsAsJson(command), 'signing secret'), 'print the headers as one JSON object (an error: {"error": {"code", "message"}})')
    .action((flags: SignFlags) => runSign(flags, command))
}
