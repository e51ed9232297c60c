import { Option, type Command } from 'commander'
import { CliError, keepExitCodeWhenStdoutCloses, printJsonDocument, printErrorsAsJson } from '../../cli-error.js'
import { readDurationFlag } from '../../duration-text.js'
import { addJsonOption, addSecretOption, resolveSecret } from '../../options.js'
import { isHttpUrl } from '../../http-url.js'
import type { VerifyReport } from '../../../webhook-tools/index.js'

interface VerifyFlags {
  secret?: string
  json?: boolean
  timeout?: string
}

const DEFAULT_TIMEOUT_MS = 10_000
const MAX_TIMEOUT_MS = 600_000

/**
 * `--timeout`: a duration, as every other command's `--timeout` takes it (`10s`); a bare whole
 * number is milliseconds, as this flag first took it, so scripts written then keep working.
 */
function readTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TIMEOUT_MS
  return readDurationFlag('--timeout', /^\s*\d+\s*$/.test(text) ? `${text.trim()}ms` : text, MAX_TIMEOUT_MS)!
}

/**
 * Why the receiver failed, for the last line. One that stops taking connections midway was most
 * likely crashed by the delivery before. One that refuses every correctly signed delivery
 * is more often checked with another secret (serve's forward secret and an endpoint's differ) or
 * at another path than broken: "mishandled" sent its developer looking in the wrong place.
 */
function describeFailure(report: VerifyReport): string {
  // A receiver that a delivery crashed refuses every later one: those were never judged. The
  // crash shows as the first unanswered case before the first refused connection (a dying
  // process may reset one more connection before the port refuses them), or, with none, the
  // answered case just before.
  const gone = report.cases.findIndex((result, index) => index > 0 && result.status === null && /^ECONNREFUSED\b/.test(result.error ?? ''))
  if (gone > 0) {
    let first = gone
    while (first > 0 && report.cases[first - 1]!.status === null) first--
    const crashed = first === gone ? gone - 1 : first
    const last = report.cases[crashed]!
    const answer = last.status === null ? `no answer: ${last.error}` : `it answered ${last.status}`
    const after = report.cases.length - crashed - 1
    // A receiver restarted meanwhile (a watcher such as nodemon) answers again: count only the unanswered.
    const unanswered = report.cases.slice(crashed + 1).filter((result) => result.status === null).length
    const which = unanswered === after ? `The ${after} case${after === 1 ? '' : 's'} after it` : `${unanswered} of the ${after} cases after it`
    return `the receiver stopped taking connections after "${last.name}" (${answer}): did that delivery crash it? ${which} got no answer, so ${unanswered === 1 ? 'it was' : 'they were'} not judged`
  }
  const good = report.cases.filter((result) => result.expected === '2xx')
  const refused = good.every((result) => result.status !== null && (result.status < 200 || result.status >= 300))
  if (!refused) return `the receiver mishandled ${report.failed} of ${report.cases.length} deliveries`
  const statuses = [...new Set(good.map((result) => result.status))].sort().join(', ')
  const redirects = good.every((result) => result.status! >= 300 && result.status! < 400)
  const check = redirects ? 'deliveries follow no redirect; give the URL it redirects to'
    : statuses === '404' || statuses === '405' ? 'does it take POST requests at this URL\'s path?'
      : 'is --secret (or SANDBOX_WEBHOOK_SECRET) the secret it verifies with?'
  return `the receiver refused all ${good.length} correctly signed deliveries (it answered ${statuses}): ${check}`
}

async function runVerify(receiverUrl: string, flags: VerifyFlags, command: Command): Promise<void> {
  const timeoutMs = readTimeout(flags.timeout)
  const secret = resolveSecret(flags.secret)
  if (!secret) throw new CliError('missing --secret: the signing secret your receiver verifies with (or set SANDBOX_WEBHOOK_SECRET)')
  const { maskCredentials, maskUrlPassword } = await import('../../../text/url-password.js')
  if (!isHttpUrl(receiverUrl)) throw new CliError(`<receiver-url> must be an http(s) URL, got "${maskCredentials(receiverUrl)}"`)
  const { verifyReceiver, ReceiverUnreachableError } = await import('../../../webhook-tools/index.js')
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  if (!flags.json) write(`sending ${chalk.bold('the verify battery')} to ${maskUrlPassword(receiverUrl)}`)
  let report
  try {
    report = await verifyReceiver({
      url: receiverUrl,
      secret,
      timeoutMs,
      onCase: flags.json ? undefined : (result) => {
        const mark = result.ok ? chalk.green('✓') : chalk.red('✗')
        const got = result.status === null ? `no answer (${result.error})` : String(result.status)
        write(`  ${mark} ${result.name.padEnd(44)} expected ${result.expected.padEnd(7)} got ${result.ok ? got : chalk.red(got)}  ${chalk.dim(`${Math.round(result.duration_ms)}ms`)}`)
        write(chalk.dim(`      sent ${result.sent}`))
      },
    })
  } catch (error) {
    if (error instanceof ReceiverUnreachableError) throw new CliError(error.message, { code: 'UNREACHABLE' })
    throw error
  }
  if (flags.json) {
    printJsonDocument(command, report, 2)
  } else {
    const wrong = report.cases.filter((result) => !result.ok)
    write('')
    if (wrong.length > 0) write(chalk.red(`mishandled: ${wrong.map((result) => result.name).join(', ')}`))
    write(wrong.length > 0 ? chalk.red(`${report.passed} passed, ${report.failed} failed`) : chalk.green(`${report.passed} passed, ${report.failed} failed`))
  }
  if (report.failed > 0) throw new CliError(describeFailure(report), { exitCode: 1, code: 'FAILED' })
}

/** `sandbox webhook verify`: attacks a receiver with good and forged deliveries and judges it. */
export function registerWebhookVerify(group: Command): void {
  const command = group
    .command('verify')
    .description('check that a webhook receiver accepts good deliveries and rejects forged, stale and malformed ones')
    .argument('<receiver-url>', 'the receiver to check, e.g. http://127.0.0.1:3000/webhooks')
    .addOption(new Option('--timeout <duration>', 'how long to wait for each answer, e.g. 30s (a bare number is ms; default 10s, at most 10m)'))
  addJsonOption(addSecretOption(printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)), 'the secret the receiver verifies with'), 'print one JSON report on stdout and nothing else (an error that stops it: {"error": {"code", "message"}})')
    .action((receiverUrl: string, flags: VerifyFlags) => runVerify(receiverUrl, flags, command))
}
