import { afterEach, describe, expect, it, vi } from 'vitest'
import { SandboxApiError, SandboxConnectionError } from '../../src/client/api-error.js'
import { LOCAL_KEY, readBaseUrl, resolveApiTarget, toApiCliError } from '../../src/cli/api-target.js'

describe('resolveApiTarget without a key', () => {
  // serve --host 0.0.0.0 (or ::) prints its URL with that host, and its trigger hint names it:
  // the URL reaches this machine, as `run` counts a local server, so the fixed key applies.
  it.each(['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010', 'http://0.0.0.0:4010', 'http://[::]:4010', 'http://[::ffff:127.0.0.1]:4010'])('takes the local default key for %s', async (baseUrl) => {
    const target = await resolveApiTarget({ baseUrl }, { json: true })
    expect(target).toMatchObject({ baseUrl, apiKey: LOCAL_KEY, local: true })
  })

  it('asks for one for any other server (off a terminal: a usage error)', async () => {
    await expect(resolveApiTarget({ baseUrl: 'https://sandbox.example' }, { json: true })).rejects.toThrow('give the API key for https://sandbox.example with --api-key or SANDBOX_API_KEY')
  })
})

describe('resolveApiTarget --timeout', () => {
  it('takes up to the 1h the help names, per attempt, and names the flag beyond it', async () => {
    expect((await resolveApiTarget({ timeout: '1h' }, { json: true })).transport.timeoutMs).toBe(3_600_000)
    await expect(resolveApiTarget({ timeout: '61m' }, { json: true })).rejects.toThrow('--timeout: duration "61m" is out of range: from 1ms to 1h')
  })

  it('offers examples of a duration within that 1h when given none', async () => {
    await expect(resolveApiTarget({ timeout: '500' }, { json: true })).rejects.toThrow(/^--timeout: invalid duration "500": expected a number and ms, s, m, h, d or w \(e\.g\. 500ms, 1\.5s, 30s or 10m\)$/)
  })
})

describe('readBaseUrl', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it('names SANDBOX_BASE_URL, not a flag never given, when the variable holds the problem', () => {
    vi.stubEnv('SANDBOX_BASE_URL', 'http://ci:s3cretpw@127.0.0.1:4010')
    expect(() => readBaseUrl(undefined)).toThrow('SANDBOX_BASE_URL cannot hold a user name or password (http://****@127.0.0.1:4010): fetch sends none; the API takes its key from --api-key')
    vi.stubEnv('SANDBOX_BASE_URL', 'https://sandbox.example/api/sandbox')
    expect(() => readBaseUrl(undefined)).toThrow(/^SANDBOX_BASE_URL "https:\/\/sandbox\.example\/api\/sandbox" ends in \/api\/sandbox/)
    // The flag wins, and is the one named.
    expect(() => readBaseUrl('http://:pw@127.0.0.1:4010')).toThrow(/^--base-url cannot hold/)
  })

  it('refuses a password without a user name too, never printing it', () => {
    expect(() => readBaseUrl('http://:s3cretpw@127.0.0.1:4010')).toThrow('--base-url cannot hold a user name or password (http://****@127.0.0.1:4010): fetch sends none; the API takes its key from --api-key')
  })

  it('refuses a URL that is none at once, rather than retrying a request fetch cannot make', () => {
    // The paths are appended as text: "http://127.0.0.1:4010 /api/sandbox/state" was retried 4
    // times as a network error and reported as a server that is not running.
    expect(() => readBaseUrl('http://127.0.0.1:4010 ')).toThrow('--base-url "http://127.0.0.1:4010 " is not a URL: it holds a space or a line break (check its quotes)')
    expect(() => readBaseUrl('http://[::1')).toThrow(/^--base-url "http:\/\/\[::1" is not a URL$/)
    // Not even an unparsable one shows a password.
    expect(() => readBaseUrl('http://ci:s3cretpw@exa mple')).toThrow('--base-url "http://****@exa mple" is not a URL')
  })

  it('refuses the API\'s own prefix at its end, naming the root to give instead', () => {
    expect(() => readBaseUrl('https://sandbox.example/api/sandbox')).toThrow('--base-url "https://sandbox.example/api/sandbox" ends in /api/sandbox, which every path of the API starts with (GET state would ask for /api/sandbox/api/sandbox/state): give the server\'s root, https://sandbox.example')
    expect(() => readBaseUrl('http://127.0.0.1:8080/gateway/api/sandbox/')).toThrow(/give the server's root, http:\/\/127\.0\.0\.1:8080\/gateway$/)
    // A path prefix of a proxy is a base URL like any other.
    expect(readBaseUrl('https://gateway.example/sandbox/')).toBe('https://gateway.example/sandbox/')
    expect(readBaseUrl('https://gateway.example/api/sandboxes')).toBe('https://gateway.example/api/sandboxes')
  })

  it('refuses a query or fragment, which the API\'s paths would follow, naming the root to give instead', () => {
    expect(() => readBaseUrl('https://gateway.example/sandbox/?tenant=a')).toThrow('--base-url "https://gateway.example/sandbox/?tenant=a" must not have a query or fragment (?tenant=a): the API\'s paths would go after it, so every request would ask for /sandbox/ itself: give the server\'s root, https://gateway.example/sandbox')
    expect(() => readBaseUrl('http://127.0.0.1:4010#')).toThrow(/^--base-url "http:\/\/127\.0\.0\.1:4010#" must not have a query or fragment \(#\)/)
  })
})

describe('toApiCliError', () => {
  const target = { baseUrl: 'https://sandbox.example', proxy: undefined, local: false }
  it('a 403 refuses the key as a 401 does (exit 2, KEY_REFUSED); any other refusal is the API\'s (exit 1, REFUSED)', () => {
    const forbidden = new SandboxApiError(403, 'FORBIDDEN', 'req_1', { error: 'This key may not do that.' }, 'GET', '/api/sandbox/webhooks')
    expect(toApiCliError(forbidden, target)).toMatchObject({ exitCode: 2, code: 'KEY_REFUSED', message: 'the server refused the key: GET /api/sandbox/webhooks answered 403 FORBIDDEN: This key may not do that.' })
    const missing = new SandboxApiError(404, 'WEBHOOK_DELIVERY_NOT_FOUND', 'req_2', { error: 'No such delivery.' }, 'POST', '/api/sandbox/webhooks/retry')
    expect(toApiCliError(missing, target)).toMatchObject({ exitCode: 1, code: 'REFUSED', message: 'POST /api/sandbox/webhooks/retry answered 404 WEBHOOK_DELIVERY_NOT_FOUND: No such delivery.' })
  })

  it('a port fetch blocks is not a server that is down: exit 2 with no "is the server running?"', () => {
    const blocked = new SandboxConnectionError('http://127.0.0.1:6665/api/sandbox/webhooks', 1, { cause: new TypeError('bad port'), blockedPort: true })
    const error = toApiCliError(blocked, { baseUrl: 'http://127.0.0.1:6665', proxy: undefined, local: true }) as Error
    expect(error).toMatchObject({ exitCode: 2, code: 'UNREACHABLE' })
    expect(error.message).toBe('cannot reach http://127.0.0.1:6665/api/sandbox/webhooks: fetch refuses port 6665 before connecting, as browsers do (a blocked port of the fetch standard, https://fetch.spec.whatwg.org/#port-blocking); serve the sandbox on another port')
  })
})
