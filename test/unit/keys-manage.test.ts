import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKeyRecord, readKeysFile } from '../../src/keys/keys-file.js'
import { maskApiKey } from '../../src/keys/api-key-text.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'
import { parseDuration } from '../../src/cli/duration-text.js'
import { addKey, matchKey, resetKeySession, revokeKey } from '../../src/keys/manage-keys.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-keys-manage')

const NOW = new Date('2026-03-01T12:00:00.000Z')

describe('parseDuration', () => {
  it('reads ms, s, m, h, d and w, with decimals, and rejects anything else', () => {
    expect(parseDuration('45s')).toBe(45_000)
    expect(parseDuration('90m')).toBe(90 * 60_000)
    expect(parseDuration('12h')).toBe(12 * 3_600_000)
    expect(parseDuration('30d')).toBe(30 * 86_400_000)
    expect(parseDuration('2W')).toBe(14 * 86_400_000)
    expect(parseDuration('500ms')).toBe(500)
    expect(parseDuration('1.5s')).toBe(1_500)
    expect(parseDuration('1.5h')).toBe(5_400_000)
    expect(parseDuration('0.25 s')).toBe(250)
    for (const bad of ['', '30', 'd', '-1d', 'soon', '3 days', '1.s', '.5s', '1e3s', '500 msec']) expect(() => parseDuration(bad), bad).toThrow(/invalid duration/)
  })

  it('refuses what rounds to nothing and what is longer than the flag takes, saying the range', () => {
    expect(() => parseDuration('0s')).toThrow('duration "0s" is out of range: from 1ms to 3650d')
    expect(() => parseDuration('0.4ms')).toThrow('duration "0.4ms" is out of range: from 1ms to 3650d')
    expect(() => parseDuration('99999999999w')).toThrow('duration "99999999999w" is out of range: from 1ms to 3650d')
    expect(parseDuration('3650d')).toBe(3650 * 86_400_000)
    expect(() => parseDuration('2h', 3_600_000)).toThrow('duration "2h" is out of range: from 1ms to 1h')
    expect(parseDuration('60m', 3_600_000)).toBe(3_600_000)
  })

  it('offers only examples the range takes when the text is no duration', () => {
    const hint = (maxMs?: number) => { try { parseDuration('500', maxMs) } catch (error) { return (error as Error).message } }
    expect(hint()).toBe('invalid duration "500": expected a number and ms, s, m, h, d or w (e.g. 500ms, 1.5s, 30s, 10m or 30d)')
    // run --timeout, run --wait and the API commands' --timeout (1h); webhook verify --timeout (10m); --wait of trigger and retry (15m).
    for (const maxMs of [3_600_000, 600_000, 900_000]) expect(hint(maxMs), String(maxMs)).toMatch(/\(e\.g\. 500ms, 1\.5s, 30s or 10m\)$/)
    expect(hint(1_000)).toMatch(/\(e\.g\. 500ms\)$/)
    expect(hint(100)).toMatch(/\(e\.g\. 100ms\)$/)
  })
})

describe('addKey', () => {
  it('appends to the file, creating it when missing', async () => {
    const path = join(await tempDir(), 'keys.json')
    const first = await addKey(path, { label: 'ci', now: NOW })
    const second = await addKey(path, { expiresAt: '2027-01-01T00:00:00.000Z' })
    const file = await readKeysFile(path)
    expect(file.keys.map((record) => record.key)).toEqual([first.key, second.key])
    expect(file.keys[0]).toMatchObject({ label: 'ci', created_at: NOW.toISOString(), expires_at: null })
    expect(file.keys[1]).toMatchObject({ label: null, expires_at: '2027-01-01T00:00:00.000Z' })
  })
})

describe('matchKey', () => {
  const a = { ...createKeyRecord({ now: NOW }), key: 'sk_sandbox_AAAAbbbbCCCCddddEEEEffffGGGGhhhh' }
  const b = { ...createKeyRecord({ now: NOW }), key: 'sk_sandbox_AAAAzzzzCCCCddddEEEEffffGGGGyyyy' }
  const file = { version: 1 as const, keys: [a, b] }

  it('accepts the full key, its masked form or a unique prefix', () => {
    expect(matchKey(file, a.key)).toBe(a)
    expect(matchKey(file, maskApiKey(b.key))).toBe(b)
    // As typed on a keyboard without "…".
    expect(matchKey(file, maskApiKey(b.key).replace('…', '...'))).toBe(b)
    expect(matchKey(file, 'sk_sandbox_AAAAb')).toBe(a)
  })

  it('says why nothing or several keys matched', () => {
    expect(() => matchKey(file, 'sk_sandbox_AAAA')).toThrow(/matches 2 keys/)
    expect(() => matchKey(file, 'sk_sandbox_nobody')).toThrow(/no registered key matches/)
    // A very short prefix would match by accident; it must name the key.
    expect(() => matchKey(file, 'sk_')).toThrow(/"sk_" is too short to pick a key/)
    expect(() => matchKey(file, 'sk_sandbox_open_mode_key_0001')).toThrow(/is not a registered key .* an open-mode key has none \(for an empty state, use a new key\)/)
  })
})

describe('revokeKey and resetKeySession', () => {
  async function fileWithTwoKeys() {
    const path = join(await tempDir(), 'keys.json')
    const records = [createKeyRecord({ now: NOW }), createKeyRecord({ now: NOW })]
    await writeKeysFile(path, { version: 1, keys: records })
    return { path, records }
  }

  it('revokes one key and keeps the first revocation time', async () => {
    const { path, records } = await fileWithTwoKeys()
    const first = await revokeKey(path, records[0]!.key, NOW)
    expect(first.before.revoked_at).toBeNull()
    expect(first.after.revoked_at).toBe(NOW.toISOString())
    await revokeKey(path, records[0]!.key, new Date('2026-04-01T00:00:00.000Z'))
    const file = await readKeysFile(path)
    expect(file.keys[0]!.revoked_at).toBe(NOW.toISOString())
    expect(file.keys[1]!.revoked_at).toBeNull()
  })

  it('gives a key a new session, or none with drop, and reports the old one', async () => {
    const { path, records } = await fileWithTwoKeys()
    const reset = await resetKeySession(path, records[1]!.key)
    expect(reset.before.session_id).toBe(records[1]!.session_id)
    expect(reset.after.session_id).toMatch(/^ses_[0-9a-f]+$/)
    expect(reset.after.session_id).not.toBe(records[1]!.session_id)
    const dropped = await resetKeySession(path, records[1]!.key, { drop: true })
    expect(dropped.after.session_id).toBeNull()
    const file = await readKeysFile(path)
    expect(file.keys[1]!.session_id).toBeNull()
    expect(file.keys[0]!.session_id).toBe(records[0]!.session_id)
    await expect(revokeKey(path, 'sk_sandbox_nobody_000000')).rejects.toThrow(/no registered key/)
  })
})

describe('revoking or resetting a key the keys file does not hold', () => {
  it('names the keys file it read, and says when there is none, so a lead in the wrong directory gives --keys', async () => {
    // "is not a registered key ... an open-mode key has none" sent a lead whose server reads
    // another keys file (another directory, no --keys) to doubt the key, not the file.
    const key = 'sk_sandbox_issued_by_ci_0123456789'
    const missing = join(await tempDir(), 'keys.json')
    for (const change of [() => revokeKey(missing, key), () => resetKeySession(missing, key)]) {
      await expect(change()).rejects.toThrow(`there is no keys file ${missing}: give the one the server reads with --keys FILE (or SANDBOX_KEYS_FILE)`)
    }
    const path = join(await tempDir(), 'keys.json')
    await writeKeysFile(path, { version: 1, keys: [createKeyRecord({ now: NOW })] })
    await expect(revokeKey(path, key)).rejects.toThrow(`${maskApiKey(key)} is not a registered key of ${path} (see "sandbox keys list"; another keys file: --keys FILE)`)
  })
})

describe('a keys file of a newer version', () => {
  it('keeps the fields this version does not know when a key is added, revoked or reset', async () => {
    const path = join(await tempDir(), 'keys.json')
    const record = createKeyRecord({ now: NOW })
    await writeFile(path, JSON.stringify({ version: 1, defaults: { ttl: '30d' }, keys: [{ ...record, scopes: ['loans:read'] }] }))
    await addKey(path, { now: NOW })
    await revokeKey(path, record.key, NOW)
    await resetKeySession(path, record.key)
    const written = JSON.parse(await readFile(path, 'utf8')) as { defaults: unknown; keys: Array<Record<string, unknown>> }
    // Before, every rewrite dropped them: the newer version's settings were lost to it.
    expect(written.defaults).toEqual({ ttl: '30d' })
    expect(written.keys[0]).toMatchObject({ key: record.key, scopes: ['loans:read'], revoked_at: NOW.toISOString() })
    expect(written.keys[1]).not.toHaveProperty('scopes')
  })

  it('is refused with a higher version, saying it is newer and what to do, and left as it is', async () => {
    const path = join(await tempDir(), 'keys.json')
    const text = JSON.stringify({ version: 2, keys: [] })
    await writeFile(path, text)
    await expect(addKey(path, { now: NOW })).rejects.toThrow(new RegExp(`^keys file ${path.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&')} was written by a newer sandbox \\(version 2\\); this is partner-sandbox \\S+, which reads version 1\\. It was not changed: use that newer version again, or give this one another keys file \\(--keys\\)$`))
    expect(await readFile(path, 'utf8')).toBe(text)
  })
})
