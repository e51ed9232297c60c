import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { findClosedPort } from '../helpers/receiver.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { deriveKeyId } from '../../src/server/auth.js'

afterEach(() => killAll())

const testRedis = useTestRedis()
const tempDir = useTempDirs('sandbox-redis-reset-e2e')

/** A test redis, a keys file with one key, its text before any reset, and an admin connection to the redis. */
async function createKeyOnRedis() {
  const redis = await testRedis()
  const keysFile = join(await tempDir(), 'keys.json')
  const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()
  const before = await readFile(keysFile, 'utf8')
  return { redis, keysFile, key, before, admin: new Redis(redis.port, '127.0.0.1') }
}

describe.skipIf(!hasRedis)('sandbox keys reset on a redis that reads but refuses deletes', () => {
  it('fails before the keys file changes, so the old session\'s data is not left behind under a key that moved on', async () => {
    const { redis, keysFile, key, before, admin } = await createKeyOnRedis()
    // A replica (of a primary that is gone): reads work, deletes are refused.
    await admin.replicaof('127.0.0.1', await findClosedPort())
    try {
      const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', redis.url])
      expect(reset.code).toBe(2)
      expect(reset.stderr).toBe('sandbox: the key was not reset: its storage refuses to delete (READONLY You can\'t write against a read only replica.)\n')
      expect(await readFile(keysFile, 'utf8')).toBe(before)
    } finally {
      await admin.replicaof('NO', 'ONE')
      await admin.quit()
    }
    const again = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', redis.url])
    expect([again.code, again.stdout]).toEqual([0, expect.stringContaining('now starts from an empty sandbox state')])
  })

  it('fails before the keys file changes for a redis user that may delete but not list keys (SCAN), which the deletion does first', async () => {
    const { redis, keysFile, key, before, admin } = await createKeyOnRedis()
    // Fast commands only, a common hardening: GET, EXISTS and UNLINK pass, SCAN (slow) does not.
    await admin.acl('SETUSER', 'fast-only', 'on', '>pw', '~sandbox:*', '+@fast', '+info', '+@connection')
    try {
      const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', redis.url.replace('//', '//fast-only:pw@')])
      expect(reset.code).toBe(2)
      expect(reset.stderr).toBe('sandbox: the key was not reset: its storage refuses to list keys (NOPERM this user has no permissions to run the \'scan\' command)\n')
      expect(await readFile(keysFile, 'utf8')).toBe(before)
    } finally {
      await admin.acl('DELUSER', 'fast-only')
      await admin.quit()
    }
  })

  it('says the key was reset when deleting its old session\'s data fails after the keys file changed', async () => {
    const { redis, keysFile, key, before, admin } = await createKeyOnRedis()
    const sessionId = (JSON.parse(before) as { keys: Array<{ session_id: string }> }).keys[0]!.session_id
    // A batch of the old session, and a user that may write session documents only: the checks
    // pass, and the deletion fails on the batch, once the keys file has its new session.
    await admin.set(`sandbox:idem:${deriveKeyId(key)}:${sessionId}:1`, '[]')
    await admin.acl('SETUSER', 'sessions-only', 'on', '>pw', 'resetkeys', '%R~sandbox:*', '%RW~sandbox:session:*', '+@read', '+@write', '+@keyspace', '+@connection', '+info')
    try {
      const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', redis.url.replace('//', '//sessions-only:pw@')])
      expect(reset.code).toBe(2)
      expect(reset.stderr).toMatch(new RegExp(`^sandbox: sk_sandbox_\\S+ was reset, but deleting the data of its old session ${sessionId} failed \\(storage failed to remove idem:\\S+: NOPERM .*\\); a running sandbox serve deletes it once it reads the reset, else it stays in storage\\n$`))
      expect(await readFile(keysFile, 'utf8')).not.toContain(sessionId)
    } finally {
      await admin.acl('DELUSER', 'sessions-only')
      await admin.quit()
    }
  })
})
