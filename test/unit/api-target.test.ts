import { describe, expect, it } from 'vitest'
import { LOCAL_KEY, resolveApiTarget } from '../../src/cli/api-target.js'

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
})
