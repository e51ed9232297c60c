import { Option, type Command } from 'commander'
import { CliError, keepExitCodeWhenStdoutCloses, printJsonDocument, printErrorsAsJson } from '../../cli-error.js'
import { readDurationFlag } from '../../duration-text.js'
import { addJsonOption, addSecretOption, resolveSecret } from '../../options.js'
import { isHttpUrl } from '../../http-url.js'
import { describeVerifyFailure } from '../../verify-failure.js'
import { showAnswerExcerpt } from '../../answer-excerpt.js'

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
        const answer = result.ok ? undefined : showAnswerExcerpt(result.answer)
        if (answer) write(chalk.dim(`      answered: ${answer}`))
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
  if (report.failed > 0) throw new CliError(describeVerifyFailure(report, timeoutMs), { exitCode: 1, code: 'FAILED' })
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
