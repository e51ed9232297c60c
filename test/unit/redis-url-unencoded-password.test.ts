import { describe, expect, it } from 'vitest'
import { parseStorageKind } from '../../src/storage/create-storage.js'

/** What `--storage URL` fails with: the message serve, logs and keys reset print. */
function refusal(url: string): string {
  try {
    parseStorageKind(url)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${url} was accepted`)
}

describe('a redis URL whose password has a character a URL gives a meaning to', () => {
  it('never shows the password, and says to percent-encode it, when the URL does not parse', () => {
    for (const [url, secret] of [['redis://:a/b@127.0.0.1:6379/0', 'a/b'], ['redis://:p@ss:w/rd#1%@127.0.0.1:6379/0', 'ss:w/rd'], ['redis://:12/34@127.0.0.1:6379/0', '12/34']] as const) {
      const message = refusal(url)
      expect(message).toContain('"redis://***@127.0.0.1:6379/0" is not a redis URL')
      expect(message).toContain('percent-encode @, :, /, ?, # and % in the user name or password (%40, %3A, %2F, %3F, %23, %25)')
      expect(message).not.toContain(secret)
    }
  })

  it('refuses, without showing it, one that parses with the rest of the password taken for another host, a query or a fragment', () => {
    for (const [url, secret] of [['redis://u:12#34@127.0.0.1:6379/0', '12#34'], ['redis://u:12?x=34@127.0.0.1:6379/0', 'x=34'], ['redis://127.0.0.1:6379/0/:pw-9@x', 'pw-9']] as const) {
      const message = refusal(url)
      expect(message).toMatch(/^"redis:\/\/\*\*\*@[^"]*" has an @ after its host: a \/ \? or # in a password ends the host early; percent-encode/)
      expect(message).not.toContain(secret)
    }
  })

  it('still takes a percent-encoded password, a password with a plain @, and an @ in ?password=', () => {
    expect(parseStorageKind('redis://:a%2Fb%23c@127.0.0.1:6379/0')).toBe('redis')
    expect(parseStorageKind('redis://:p@ss@127.0.0.1:6379/0')).toBe('redis')
    expect(parseStorageKind('redis://127.0.0.1:6379/0?password=a@b')).toBe('redis')
  })

  it('takes a database number above 99, for a redis whose redis.conf sets more `databases`', () => {
    expect(parseStorageKind('redis://127.0.0.1:6379/150')).toBe('redis')
    expect(parseStorageKind('redis://127.0.0.1:6379?db=150')).toBe('redis')
  })

  it('refuses, without showing it, a user name or password with a % that starts no %XX, which the client cannot decode', () => {
    for (const [url, secret] of [['redis://:50%off@127.0.0.1:6379/0', '50%off'], ['redis://us%er:pw-1@127.0.0.1:6379/0', 'pw-1'], ['redis://:100%@127.0.0.1:6379/0', '100%']] as const) {
      const message = refusal(url)
      expect(message).toMatch(/^redis:\/\/[^ ]*\*\*\*@127\.0\.0\.1:6379\/0 has a % that starts no %XX in its user name or password; percent-encode @, :, \/, \?, # and % in the user name or password/)
      expect(message).not.toContain(secret)
    }
  })
})
