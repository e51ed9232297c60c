import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKeyRecord, describeKeyStatus, findKeyRecord, readKeysFile } from '../../src/keys/keys-file.js'
import { generateApiKey, maskApiKey } from '../../src/keys/api-key-text.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'
import type { KeyRecord } from '../../src/keys/keys-file-types.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-keys-file')

const NOW = new Date('2026-03-01T12:00:00.000Z')

function recordWith(change: Partial<KeyRecord>): KeyRecord {
  return { ...createKeyRecord({ now: NOW }), ...change }
}

describe('generateApiKey and maskApiKey', () => {
  it('makes distinct sk_sandbox_ keys of 32 letters and digits', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey()))
    expect(keys.size).toBe(50)
    for (const key of keys) expect(key).toMatch(/^sk_sandbox_[A-Za-z0-9]{32}$/)
  })

  it('shows the first and last four characters only', () => {
    const key = generateApiKey()
    const body = key.slice('sk_sandbox_'.length)
    const masked = maskApiKey(key)
    expect(masked).toBe(`sk_sandbox_${body.slice(0, 4)}…${body.slice(-4)}`)
    expect(masked).not.toContain(body.slice(4, 28))
    expect(maskApiKey('sk_sandbox_short')).toBe('sk_sandbox_*****')
  })
})

describe('readKeysFile and writeKeysFile', () => {
  it('reads a missing file as an empty one', async () => {
    expect(await readKeysFile(join(await tempDir(), 'nothing.json'))).toEqual({ version: 1, keys: [] })
  })

  it('round-trips records through a pretty-printed file and leaves no temp files', async () => {
    const dir = await tempDir()
    const path = join(dir, 'nested', 'keys.json')
    const file = { version: 1 as const, keys: [createKeyRecord({ label: 'ci', expiresAt: '2027-01-01T00:00:00.000Z', now: NOW }), createKeyRecord({ now: NOW })] }
    await writeKeysFile(path, file)
    expect(await readKeysFile(path)).toEqual(file)
    expect(await readFile(path, 'utf8')).toContain('\n  "keys": [\n')
    expect(await readdir(join(dir, 'nested'))).toEqual(['keys.json'])
    // Keys are secrets: only the owner may read the file.
    expect((await stat(path)).mode & 0o077).toBe(0)
  })

  it('gives a hand-written record without session_id the same session on every read', async () => {
    const path = join(await tempDir(), 'keys.json')
    const key = 'sk_sandbox_handwritten_0123456789'
    await writeFile(path, JSON.stringify({ keys: [{ key, created_at: NOW.toISOString() }, { key: `${key}x`, created_at: NOW.toISOString() }] }))
    const first = await readKeysFile(path)
    const second = await readKeysFile(path)
    expect(first.keys[0]).toMatchObject({ key, label: null, expires_at: null, revoked_at: null })
    expect(first.keys[0]!.session_id).toMatch(/^ses_[0-9a-f]+$/)
    expect(second.keys[0]!.session_id).toBe(first.keys[0]!.session_id)
    expect(first.keys[1]!.session_id).not.toBe(first.keys[0]!.session_id)
  })

  it('keeps a dropped session (null) as null', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeKeysFile(path, { version: 1, keys: [recordWith({ session_id: null })] })
    expect((await readKeysFile(path)).keys[0]!.session_id).toBeNull()
  })

  it('reads a file saved by a Windows editor (byte order mark, CRLF, tabs) as the same keys', async () => {
    const dir = await tempDir()
    const path = join(dir, 'keys.json')
    await writeKeysFile(path, { version: 1, keys: [recordWith({ label: 'café' })] })
    const written = await readFile(path, 'utf8')
    const windows = join(dir, 'keys windows #1 é.json')
    await writeFile(windows, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(written.replaceAll('  ', '\t').replaceAll('\n', '\r\n'))]))
    expect(await readKeysFile(windows)).toEqual(await readKeysFile(path))
  })

  it('says where a syntax error is, and what to do with an empty or UTF-16 file, naming the file', async () => {
    const dir = await tempDir()
    const cases: Array<[Buffer, string]> = [
      [Buffer.from('\uFEFF{\r\n  "version": 1\r\n  "keys": []\r\n}\r\n'), ": not valid JSON (line 3, column 3): Expected ',' or '}' after property value"],
      [Buffer.alloc(0), ': is empty; delete it ("sandbox keys create" makes a new one) or write {"version": 1, "keys": []} into it'],
      [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"version": 1, "keys": []}', 'utf16le')]), ': is UTF-16, not UTF-8; save it as UTF-8'],
    ]
    for (const [index, [bytes, message]] of cases.entries()) {
      const path = join(dir, `bad-${index}.json`)
      await writeFile(path, bytes)
      await expect(readKeysFile(path)).rejects.toThrow(`keys file ${path}${message}`)
    }
    await expect(readKeysFile(dir)).rejects.toThrow(`cannot read keys file ${dir}: it is a directory, not a file`)
  })

  it('writes through a symbolic link to the file it leads to, and leaves the link a link', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'dotfiles'))
    const target = join(dir, 'dotfiles', 'keys.json')
    await writeKeysFile(target, { version: 1, keys: [recordWith({ label: 'first' })] })
    const link = join(dir, 'keys link.json')
    await symlink('dotfiles/keys.json', link)
    const file = await readKeysFile(link)
    await writeKeysFile(link, { version: 1, keys: [...file.keys, recordWith({ label: 'second' })] })
    expect((await lstat(link)).isSymbolicLink()).toBe(true)
    expect((await readKeysFile(target)).keys.map((record) => record.label)).toEqual(['first', 'second'])
    // A link to a file not made yet makes that file.
    const dangling = join(dir, 'later.json')
    await symlink(join(dir, 'dotfiles', 'later-target.json'), dangling)
    await writeKeysFile(dangling, { version: 1, keys: [recordWith({ label: 'third' })] })
    expect((await lstat(dangling)).isSymbolicLink()).toBe(true)
    expect((await readKeysFile(join(dir, 'dotfiles', 'later-target.json'))).keys[0]!.label).toBe('third')
    expect((await readdir(join(dir, 'dotfiles'))).sort()).toEqual(['keys.json', 'later-target.json'])
  })

  it('follows a relative link from the directory it really is in, when reached through a linked directory', async () => {
    const dir = await tempDir()
    // real/keys.json is the file; real/sub/keys.json links to it as ../keys.json; work/linked is real/sub.
    await mkdir(join(dir, 'real', 'sub'), { recursive: true })
    await mkdir(join(dir, 'work'))
    const target = join(dir, 'real', 'keys.json')
    await writeKeysFile(target, { version: 1, keys: [recordWith({ label: 'first' })] })
    await symlink('../keys.json', join(dir, 'real', 'sub', 'keys.json'))
    await symlink('../real/sub', join(dir, 'work', 'linked'))
    const link = join(dir, 'work', 'linked', 'keys.json')
    const file = await readKeysFile(link)
    await writeKeysFile(link, { version: 1, keys: [...file.keys, recordWith({ label: 'second' })] })
    expect((await readKeysFile(target)).keys.map((record) => record.label)).toEqual(['first', 'second'])
    expect((await lstat(join(dir, 'real', 'sub', 'keys.json'))).isSymbolicLink()).toBe(true)
    expect(await readdir(join(dir, 'work'))).toEqual(['linked'])
  })

  it('rejects malformed files with an error naming the file and the problem', async () => {
    const dir = await tempDir()
    const key = 'sk_sandbox_handwritten_0123456789'
    const at = NOW.toISOString()
    const cases: Array<[string, RegExp]> = [
      ['{"keys": [', /not valid JSON/],
      ['[]', /not a sandbox keys file/],
      ['{"version": 1}', /not a sandbox keys file/],
      [JSON.stringify({ version: 2, keys: [] }), /version 2/],
      [JSON.stringify({ keys: ['sk_sandbox_x'] }), /entry 1 .*not an object/],
      [JSON.stringify({ keys: [{ key: 'pk_live_0123456789abcdef', created_at: at }] }), /entry 1 .*"key"/],
      [JSON.stringify({ keys: [{ key }] }), /entry 1 .*created_at/],
      [JSON.stringify({ keys: [{ key, created_at: at, revoked_at: 'yes' }] }), /entry 1 .*revoked_at/],
      [JSON.stringify({ keys: [{ key, created_at: at, expires_at: 5 }] }), /entry 1 .*expires_at/],
      [JSON.stringify({ keys: [{ key, created_at: at, label: 7 }] }), /entry 1 .*label/],
      [JSON.stringify({ keys: [{ key, created_at: at }, { key, created_at: at }] }), /entry 2 .*repeats/],
    ]
    for (const [index, [text, problem]] of cases.entries()) {
      const path = join(dir, `bad-${index}.json`)
      await writeFile(path, text)
      await expect(readKeysFile(path), text).rejects.toThrow(path)
      await expect(readKeysFile(path), text).rejects.toThrow(problem)
    }
  })

  it('names a broken entry as a person counts it, from 1, with its key, so a hand edit finds the right one', async () => {
    // "entry 1" meant the second entry (counted from 0): a lead fixing a file of ten keys looked
    // at the first, which was fine, while the server kept refusing the file.
    const dir = await tempDir()
    const at = NOW.toISOString()
    const first = 'sk_sandbox_first_0123456789abcdef'
    const second = 'sk_sandbox_second_0123456789abcde'
    const path = join(dir, 'keys.json')
    await writeFile(path, JSON.stringify({ keys: [{ key: first, created_at: at }, { key: second, created_at: 'yesterday' }] }))
    await expect(readKeysFile(path)).rejects.toThrow(`entry 2 of "keys" (${maskApiKey(second)}) has no valid "created_at" time`)
    await writeFile(path, JSON.stringify({ keys: [{ key: first, created_at: at }, { key: second, created_at: at }, { key: first, created_at: at }] }))
    await expect(readKeysFile(path)).rejects.toThrow(`entry 3 of "keys" repeats the key ${maskApiKey(first)} of entry 1`)
  })

  it('refuses a hand-written expires_at without a time zone, or not ISO, rather than reading it in the machine\'s zone', async () => {
    // A file edited on a laptop in Tokyo and read by CI in UTC gave the key two different
    // expiries, and `keys list` showed the zoneless time marked Z whatever the zone.
    const dir = await tempDir()
    const key = 'sk_sandbox_handwritten_0123456789'
    const at = NOW.toISOString()
    const cases: Array<[string, RegExp]> = [
      ['2027-01-31T20:00:00', /entry 1 .*"expires_at" "2027-01-31T20:00:00" with no time zone: add Z for UTC \(2027-01-31T20:00:00Z\) or an offset such as \+01:00/],
      ['2027-01-31 20:00', /entry 1 .*"expires_at" .*with no time zone/],
      ['1', /entry 1 .*"expires_at" that is neither null nor an ISO time/],
      ['January 31, 2027', /entry 1 .*"expires_at" that is neither null nor an ISO time/],
    ]
    for (const [index, [expires, problem]] of cases.entries()) {
      const path = join(dir, `zone-${index}.json`)
      await writeFile(path, JSON.stringify({ keys: [{ key, created_at: at, expires_at: expires }] }))
      await expect(readKeysFile(path), expires).rejects.toThrow(problem)
    }
    // With a zone, or a date alone (midnight UTC, as JavaScript and --expires-at read it), it is read as before.
    for (const expires of ['2027-01-31T20:00:00Z', '2027-01-31T20:00:00+09:00', '2027-01-31T20:00:00.5-0130', '2027-01-31']) {
      const path = join(dir, 'zoned.json')
      await writeFile(path, JSON.stringify({ keys: [{ key, created_at: at, expires_at: expires }] }))
      expect((await readKeysFile(path)).keys[0]!.expires_at, expires).toBe(expires)
    }
  })

  it('refuses a hand-written session_id that is not a plain name, which storage cannot hold', async () => {
    // "../x" made every request of the key a 500 SANDBOX_API_KEY_DATABASE_REQUIRED (storage refused
    // the name) and a "storage error" on the server about disks; ":" split the session in two.
    const dir = await tempDir()
    const key = 'sk_sandbox_handwritten_0123456789'
    const at = NOW.toISOString()
    for (const [index, session] of ['../../escape', 'a:b', 'ci/main', 'ci main', '', 'x'.repeat(65)].entries()) {
      const path = join(dir, `session-${index}.json`)
      await writeFile(path, JSON.stringify({ keys: [{ key, created_at: at, session_id: session }] }))
      await expect(readKeysFile(path), session).rejects.toThrow(/entry 1 of "keys" \(sk_sandbox_\S+\) has a "session_id" that is neither null nor 1 to 64 letters, digits, _ or -/)
    }
    const path = join(dir, 'plain.json')
    await writeFile(path, JSON.stringify({ keys: [{ key, created_at: at, session_id: 'ci-main_2' }] }))
    expect((await readKeysFile(path)).keys[0]!.session_id).toBe('ci-main_2')
  })
})

describe('createKeyRecord, findKeyRecord and describeKeyStatus', () => {
  it('creates an active record with a fresh key and session', () => {
    const a = createKeyRecord({ label: 'ci', now: NOW })
    const b = createKeyRecord({ now: NOW })
    expect(a).toMatchObject({ label: 'ci', created_at: NOW.toISOString(), expires_at: null, revoked_at: null })
    expect(a.key).not.toBe(b.key)
    expect(a.session_id).toMatch(/^ses_[0-9a-f]+$/)
    expect(a.session_id).not.toBe(b.session_id)
    expect(describeKeyStatus(a, NOW)).toBe('active')
  })

  it('finds only exact keys', () => {
    const record = createKeyRecord({ now: NOW })
    const file = { version: 1 as const, keys: [createKeyRecord({ now: NOW }), record] }
    expect(findKeyRecord(file, record.key)).toBe(record)
    expect(findKeyRecord(file, record.key.slice(0, -1))).toBeUndefined()
  })

  it('reports revoked before expired before a dropped session; expiry from its time on, a revocation whatever its time', () => {
    const before = '2026-03-01T11:59:59.000Z'
    const after = '2026-03-01T12:00:01.000Z'
    expect(describeKeyStatus(recordWith({ revoked_at: before, expires_at: before, session_id: null }), NOW)).toBe('revoked')
    expect(describeKeyStatus(recordWith({ expires_at: before, session_id: null }), NOW)).toBe('expired')
    expect(describeKeyStatus(recordWith({ session_id: null }), NOW)).toBe('session_dropped')
    expect(describeKeyStatus(recordWith({ expires_at: after }), NOW)).toBe('active')
    expect(describeKeyStatus(recordWith({ expires_at: NOW.toISOString() }), NOW)).toBe('expired')
    // A revocation stamped later than the clock reads: the clock was set back after `keys revoke`.
    expect(describeKeyStatus(recordWith({ revoked_at: after }), NOW)).toBe('revoked')
  })
})
