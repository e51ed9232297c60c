import { afterEach, describe, expect, it, vi } from 'vitest'
import { CliError, toCliError } from '../../src/cli/cli-error.js'
import { DEFAULT_DATA_DIR, DEFAULT_KEYS_FILE, readDeliveryWait, resolveKeysFile, resolveSecret, resolveStorageFlags } from '../../src/cli/options.js'
import { escapeControls } from '../../src/text/escape-controls.js'
import { expandHome } from '../../src/cli/expand-home.js'
import { chalk, colorStatus, configureColor, formatClock } from '../../src/cli/output.js'

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('shared option resolution', () => {
  it('takes the flag, then the environment variable, then the default', () => {
    vi.stubEnv('SANDBOX_STORAGE', undefined)
    vi.stubEnv('SANDBOX_DATA_DIR', undefined)
    vi.stubEnv('SANDBOX_KEYS_FILE', undefined)
    expect(resolveStorageFlags({})).toEqual({ storage: 'fs', storageSource: '--storage', dataDir: DEFAULT_DATA_DIR })
    expect(resolveKeysFile(undefined)).toBe(DEFAULT_KEYS_FILE)
    // Set but empty (a CI variable that is not defined) is unset: the defaults, not "" for a path.
    vi.stubEnv('SANDBOX_STORAGE', '')
    vi.stubEnv('SANDBOX_DATA_DIR', '')
    vi.stubEnv('SANDBOX_KEYS_FILE', '')
    expect(resolveStorageFlags({})).toEqual({ storage: 'fs', storageSource: '--storage', dataDir: DEFAULT_DATA_DIR })
    expect(resolveKeysFile(undefined)).toBe(DEFAULT_KEYS_FILE)
    vi.stubEnv('SANDBOX_STORAGE', 'memory')
    vi.stubEnv('SANDBOX_DATA_DIR', '/tmp/from-env')
    vi.stubEnv('SANDBOX_KEYS_FILE', '/tmp/env-keys.json')
    expect(resolveStorageFlags({})).toEqual({ storage: 'memory', storageSource: 'SANDBOX_STORAGE', dataDir: '/tmp/from-env' })
    expect(resolveKeysFile(undefined)).toBe('/tmp/env-keys.json')
    expect(resolveStorageFlags({ storage: 'fs', dataDir: 'flag-dir' })).toEqual({ storage: 'fs', storageSource: '--storage', dataDir: 'flag-dir' })
    expect(resolveKeysFile('flag.json')).toBe('flag.json')
  })

  it('refuses a path variable with a line break (a .env saved with CRLF), unless the flag is given', () => {
    vi.stubEnv('SANDBOX_DATA_DIR', '.sandbox\r')
    vi.stubEnv('SANDBOX_KEYS_FILE', 'keys.json\r')
    expect(() => resolveStorageFlags({})).toThrow(new CliError('SANDBOX_DATA_DIR holds a line break (".sandbox\\r"), which no path has: a .env file saved with CRLF line ends? Save it with LF line ends'))
    expect(() => resolveKeysFile(undefined)).toThrow(/^SANDBOX_KEYS_FILE holds a line break/)
    expect(resolveStorageFlags({ dataDir: 'flag-dir' }).dataDir).toBe('flag-dir')
    expect(resolveKeysFile('flag.json')).toBe('flag.json')
  })

  it('refuses a webhook signing secret with a line break (a .env saved with CRLF), which would sign with another secret', () => {
    vi.stubEnv('SANDBOX_WEBHOOK_SECRET', 'whsec_0123456789abcdef\r')
    expect(() => resolveSecret(undefined)).toThrow(new CliError('SANDBOX_WEBHOOK_SECRET holds a line break, which no signing secret has: a .env file saved with CRLF line ends? Save it with LF line ends'))
    expect(() => resolveSecret('whsec_0123456789abcdef\n')).toThrow(/^--secret holds a line break/)
    expect(resolveSecret('whsec_0123456789abcdef')).toBe('whsec_0123456789abcdef')
  })

  it('refuses a webhook signing secret with a space at either end (cmd.exe\'s set NAME=value && ...), which would sign with another secret', () => {
    vi.stubEnv('SANDBOX_WEBHOOK_SECRET', 'whsec_0123456789abcdef ')
    expect(() => resolveSecret(undefined)).toThrow(new CliError('SANDBOX_WEBHOOK_SECRET starts or ends with a space, which no signing secret has: in cmd.exe, set "SANDBOX_WEBHOOK_SECRET=value" && ... keeps no space, set SANDBOX_WEBHOOK_SECRET=value && ... keeps the one before &&'))
    expect(() => resolveSecret(' whsec_0123456789abcdef')).toThrow(new CliError('--secret starts or ends with a space, which no signing secret has'))
    // webhook listen's old,new list: a space after the comma is inside the value, and allowed.
    expect(resolveSecret('whsec_0123456789abcdef, whsec_fedcba9876543210')).toBe('whsec_0123456789abcdef, whsec_fedcba9876543210')
  })

  it('refuses a webhook secret\'s preview (whsec_...abcd, as GET /webhooks and serve\'s start line show one) for the secret, saying where the secret is', () => {
    const told = (source: string) => new CliError(`${source} is a secret's preview (whsec_... and its last 4 characters, as secretPreview, serve's start line for a secret it was given, and the reports show one), not the secret: give the whole secret (serve prints the forward secret it made in full at start; an endpoint's signingSecret is answered once, by webhook register, and webhook register URL --rotate-secret makes a new one)`)
    expect(() => resolveSecret('whsec_...abcd')).toThrow(told('--secret'))
    expect(() => resolveSecret('whsec_****abcd')).toThrow(told('--secret'))
    // webhook listen's old,new list: a preview in either place.
    expect(() => resolveSecret('whsec_0123456789abcdef, whsec_...cdef')).toThrow(told('--secret'))
    vi.stubEnv('SANDBOX_WEBHOOK_SECRET', 'whsec_...abcd')
    expect(() => resolveSecret(undefined)).toThrow(told('SANDBOX_WEBHOOK_SECRET'))
  })

  it('puts a leading ~ of a path in the home directory, as a shell would (env values too), and nothing else', () => {
    expect(expandHome('~', { home: '/home/ana' })).toBe('/home/ana')
    expect(expandHome('~/proj é/keys.json', { home: '/home/ana' })).toBe('/home/ana/proj é/keys.json')
    for (const path of ['~ana/keys.json', 'a/~/b', './~', '~~/x', '-~/x', 'C:/x']) expect(expandHome(path, { home: '/home/ana' })).toBe(path)
    vi.stubEnv('HOME', '/home/ana')
    vi.stubEnv('SANDBOX_DATA_DIR', '~/data')
    vi.stubEnv('SANDBOX_KEYS_FILE', '~/keys.json')
    expect(resolveStorageFlags({}).dataDir).toBe('/home/ana/data')
    expect(resolveKeysFile(undefined)).toBe('/home/ana/keys.json')
  })
})

describe('readDeliveryWait (--wait [duration])', () => {
  it('is 10 s alone, as the help says, and names an argument it swallowed (trigger --wait loan.issued)', () => {
    expect([readDeliveryWait(undefined), readDeliveryWait(true), readDeliveryWait('2m')]).toEqual([undefined, 10_000, 120_000])
    expect(() => readDeliveryWait('loan.issued')).toThrow(new CliError('--wait: invalid duration "loan.issued": expected a number and ms, s, m, h, d or w (e.g. 500ms, 1.5s, 30s or 10m); "loan.issued" is not a duration: put it before --wait, or give --wait one (--wait 10s)'))
    // A number with a typo was meant as a duration: no word of a swallowed argument.
    expect(() => readDeliveryWait('10x')).toThrow(/^--wait: invalid duration "10x": expected a number and ms, s, m, h, d or w \(e\.g\. 500ms, 1\.5s, 30s or 10m\)$/)
  })
})

describe('toCliError', () => {
  it('turns setup problems from the library into exit-2 errors with their message', () => {
    for (const name of ['SetupError', 'StorageError', 'KeysError']) {
      const error = Object.assign(new Error(`${name} happened`), { name })
      expect(toCliError(error)).toMatchObject({ exitCode: 2, message: `${name} happened` })
    }
    const busy = Object.assign(new Error('port 4010 on 127.0.0.1 is already in use'), { code: 'EADDRINUSE' })
    expect(toCliError(busy)).toMatchObject({ exitCode: 2, code: 'EADDRINUSE' })
    const failed = new CliError('2 checks failed', { exitCode: 1, code: 'CHECK_FAILED' })
    expect(toCliError(failed)).toBe(failed)
  })

  it('reads a low open-file limit wherever it surfaces: as the error, as its cause, or as a message passed on', () => {
    const system = Object.assign(new Error("EMFILE: too many open files, open 'x.js'"), { code: 'EMFILE' })
    const advice = /\): raise the open-file limit \(ulimit -n; /
    expect(toCliError(system)).toMatchObject({ exitCode: 2, code: 'EMFILE', message: expect.stringMatching(advice) })
    const wrapped = new Error('could not start the checkpoint thread', { cause: system })
    expect(toCliError(wrapped)).toMatchObject({ exitCode: 2, code: 'EMFILE', message: expect.stringMatching(/^too many open files \(could not start the checkpoint thread \(EMFILE: too many open files, open 'x\.js'\)\): raise/) })
    expect(toCliError(new Error('checkpoint failed: ENFILE: file table overflow'))).toMatchObject({ exitCode: 2, code: 'ENFILE', message: expect.stringMatching(advice) })
  })

  it('leaves unexpected errors alone so their stack is shown', () => {
    expect(toCliError(new TypeError('x is undefined'))).toBeUndefined()
    expect(toCliError('a string')).toBeUndefined()
    expect(toCliError(undefined)).toBeUndefined()
  })
})

describe('output', () => {
  it('turns colour off under a non-empty NO_COLOR and when stdout is not a terminal', () => {
    const level = chalk.level
    try {
      chalk.level = 2
      vi.stubEnv('NO_COLOR', undefined)
      configureColor({ isTTY: true } as NodeJS.WriteStream)
      expect(colorStatus(500)).not.toBe('500')
      configureColor({ isTTY: false } as NodeJS.WriteStream)
      expect(colorStatus(500)).toBe('500')
      chalk.level = 2
      vi.stubEnv('NO_COLOR', '1')
      configureColor({ isTTY: true } as NodeJS.WriteStream)
      expect(colorStatus(404)).toBe('404')
      // no-color.org: present and not empty. An empty NO_COLOR is as if unset.
      chalk.level = 2
      vi.stubEnv('NO_COLOR', '')
      configureColor({ isTTY: true } as NodeJS.WriteStream)
      expect(colorStatus(404)).not.toBe('404')
    } finally {
      chalk.level = level
    }
  })

  it('escapes control characters of text from files and answers, so they cannot act on the terminal', () => {
    expect(escapeControls('loan \u001b[2J\u001b]0;title\u0007 done')).toBe('loan \\u001b[2J\\u001b]0;title\\u0007 done')
    expect(escapeControls('a\nb\tc\rd\u007f\u009b')).toBe('a\\nb\\tc\\rd\\u007f\\u009b')
    expect(escapeControls('line one\nline \u001b two', { keepNewlines: true })).toBe('line one\nline \\u001b two')
    expect(escapeControls('Prêt — 100 €')).toBe('Prêt — 100 €')
    expect(escapeControls('evt_\u202edcba\u202c x \u2066y\u2069')).toBe('evt_\\u202edcba\\u202c x \\u2066y\\u2069')
  })

  it('shows request times as HH:MM:SS on the local clock', () => {
    vi.stubEnv('TZ', 'UTC')
    expect(formatClock('2026-03-01T09:05:07.123Z')).toBe('09:05:07')
    vi.stubEnv('TZ', 'Asia/Kathmandu')
    expect(formatClock('2026-03-01T09:05:07.123Z')).toBe('14:50:07')
    vi.stubEnv('TZ', 'America/St_Johns')
    expect(formatClock('2026-03-01T01:05:07.123Z')).toBe('21:35:07')
  })
})
