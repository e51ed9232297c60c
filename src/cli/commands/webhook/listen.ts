import { Option, type Command } from 'commander'
import { CliError } from '../../cli-error.js'
import { formatJson } from '../../json-text.js'
import { addSecretOption, readPortSetting, resolveSecret } from '../../options.js'
import { escapeControls } from '../../../text/escape-controls.js'
import type { ReceivedWebhook } from '../../../webhook-tools/index.js'
import { isHttpUrl } from '../../http-url.js'
import { showAnswerExcerpt } from '../../answer-excerpt.js'
import { onFirstStopSignal } from '../../stop-signals.js'

interface ListenFlags {
  port: number
  host: string
  secret?: string
  printBody?: boolean
  respond?: number
  forwardTo?: string
  json?: boolean
}

function parseStatus(value: string): number {
  // Three digits as written: Number() would also take 0x1f4, 5e2 and 500.0.
  const status = /^\s*\d{3}\s*$/.test(value) ? Number(value) : NaN
  // A 1xx is not a final answer: the sender would wait for one until its timeout.
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new CliError(`--respond must be an HTTP status from 200 to 599, got "${value}"`)
  return status
}

async function runListen(flags: ListenFlags): Promise<void> {
  const { startWebhookListener } = await import('../../../webhook-tools/index.js')
  const { chalk, colorStatus, formatClock } = await import('../../output.js')
  // Comma-separated, as the reference receivers take them: the old and the new secret while a
  // rotation reaches you (no whsec_ secret has a comma: base64url).
  const secret = resolveSecret(flags.secret)?.split(',').map((part) => part.trim()).filter(Boolean)
  const { maskCredentials, maskUrlPassword } = await import('../../../text/url-password.js')
  if (flags.forwardTo && !isHttpUrl(flags.forwardTo)) throw new CliError(`--forward-to must be an http(s) URL, got "${maskCredentials(flags.forwardTo)}"`)
  // Its lines end up in logs: a token or password in the URL does not.
  const shownForward = flags.forwardTo === undefined ? undefined : maskUrlPassword(flags.forwardTo)
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const print = (delivery: ReceivedWebhook) => {
    if (flags.json) return write(formatJson({ ...delivery, headers: undefined, body: flags.printBody ? delivery.body : undefined }))
    const signature = delivery.signature === 'valid' ? chalk.green('signature valid') : delivery.signature === 'unchecked' ? chalk.dim('signature unchecked (no --secret)') : chalk.red(`signature ${delivery.signature}`)
    const forward = delivery.forwarded ? `  → ${shownForward} ${delivery.forwarded.status ?? delivery.forwarded.error}` : ''
    // Anyone who can reach the port sends these: HTTP lets header bytes 0x80-0xff through (C1
    // controls such as CSI, 0x9b), and a body that is not JSON is printed as it came, escapes
    // included, which would recolour the terminal, retitle it or forge a "signature valid" line.
    const eventType = delivery.event_type === null ? '(no event header)' : escapeControls(delivery.event_type)
    const eventId = delivery.event_id === null ? '-' : escapeControls(delivery.event_id)
    write(`${formatClock(delivery.at)} ${eventType} ${eventId} ${signature} → ${colorStatus(delivery.status)}${forward}`)
    const { forwarded } = delivery
    const answer = forwarded && forwarded.status !== null && (forwarded.status < 200 || forwarded.status >= 300) ? showAnswerExcerpt(forwarded.answer) : undefined
    if (answer) write(chalk.dim(`  answered: ${answer}`))
    if (flags.printBody) {
      // JSON is shown indented (its own line breaks kept; JSON.stringify leaves C1 controls raw);
      // any other body on one line, so that no line of it passes for one of the listener's.
      let body: string
      try {
        body = escapeControls(JSON.stringify(JSON.parse(delivery.body), null, 2), { keepNewlines: true })
      } catch {
        body = escapeControls(delivery.body)
      }
      write(chalk.dim(body))
    }
  }
  const listener = await startWebhookListener({ port: flags.port, host: flags.host, secret, respondStatus: flags.respond, forwardTo: flags.forwardTo, onDelivery: print })
  const extras = [secret?.length ? `checking signatures${secret.length > 1 ? ` (${secret.length} secrets)` : ''}` : 'no --secret: signatures unchecked', flags.respond ? `answering ${flags.respond}` : '', shownForward ? `forwarding to ${shownForward}` : ''].filter(Boolean)
  // Handlers before the readiness line: a supervisor may signal as soon as it reads it.
  const stopped = new Promise<NodeJS.Signals>((resolve) => onFirstStopSignal(resolve))
  // With --json every stdout line is JSON, the ready line included (as with serve --json-logs).
  if (flags.json) write(formatJson({ event: 'ready', url: listener.url, checking_signatures: Boolean(secret?.length), respond: flags.respond ?? null, forward_to: shownForward ?? null }))
  else write(`webhook listener ready: ${listener.url} (${extras.join(', ')})`)
  const signal = await stopped
  await listener.close()
  write(flags.json ? formatJson({ event: 'stopped', signal }) : `webhook listener stopped (${signal})`)
}

/** `sandbox webhook listen`: a local receiver that prints and checks each delivery. */
export function registerWebhookListen(group: Command): void {
  const command = group
    .command('listen')
    .description('receive webhook deliveries locally: print each, check its signature, answer 2xx (or --respond)')
    .addOption(new Option('--port <port>', 'port to listen on (0 = any free port)').argParser((value) => readPortSetting(value, '--port')).default(4242))
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1', '127.0.0.1'))
    .addOption(new Option('--print-body', 'also print each body'))
    .addOption(new Option('--respond <status>', 'answer every delivery with this status, e.g. 500 to exercise retries').argParser(parseStatus))
    .addOption(new Option('--forward-to <url>', 'pass each delivery on unchanged (same body bytes and webhook headers)'))
    .addOption(new Option('--json', 'every line a JSON object: one per delivery, and the ready and stopped lines ("event": "ready", "stopped")'))
  addSecretOption(command, 'secret to check signatures with; old,new accepts either while you rotate').action((flags: ListenFlags) => runListen(flags))
}
