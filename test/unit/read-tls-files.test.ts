import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { readTlsFiles } from '../../src/cli/read-tls-files.js'

const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url))
const CERT = join(TLS, 'cert.pem')
const KEY = join(TLS, 'key.pem')
const OTHER_KEY = join(TLS, 'proxied-key.pem')
const MISSING = join(TLS, 'missing.pem')

afterEach(() => {
  vi.unstubAllEnvs()
})

/** Sets SANDBOX_TLS_CERT and SANDBOX_TLS_KEY (undefined: unset). */
function setTlsEnv(cert: string | undefined, key: string | undefined): void {
  vi.stubEnv('SANDBOX_TLS_CERT', cert)
  vi.stubEnv('SANDBOX_TLS_KEY', key)
}

describe('readTlsFiles from the environment', () => {
  // Set in a CI job's environment, a file is on no command line: the message names its variable.
  it('names the variable that is set, and what to give with it, when only one of the two is', async () => {
    setTlsEnv(CERT, undefined)
    await expect(readTlsFiles({})).rejects.toThrow('SANDBOX_TLS_CERT is set, and https needs both files: give --tls-key or SANDBOX_TLS_KEY too, or unset SANDBOX_TLS_CERT for plain http')
    setTlsEnv(undefined, KEY)
    await expect(readTlsFiles({})).rejects.toThrow('SANDBOX_TLS_KEY is set, and https needs both files: give --tls-cert or SANDBOX_TLS_CERT too, or unset SANDBOX_TLS_KEY for plain http')
    // With a flag given, the flags are the words: the flag's half is there, the other flag is missing.
    setTlsEnv(undefined, undefined)
    await expect(readTlsFiles({ tlsCert: CERT })).rejects.toThrow('--tls-cert and --tls-key go together: give --tls-key (its private key) too, or neither for plain http')
  })

  it('names the variable of a file it cannot read, and of a pair that does not belong together', async () => {
    setTlsEnv(CERT, MISSING)
    await expect(readTlsFiles({})).rejects.toThrow(`cannot read SANDBOX_TLS_KEY ${MISSING}: no such file`)
    setTlsEnv(CERT, OTHER_KEY)
    await expect(readTlsFiles({})).rejects.toThrow(new RegExp(`^SANDBOX_TLS_CERT ${CERT} and SANDBOX_TLS_KEY ${OTHER_KEY}: `))
    // A flag and a variable together: each is named by where it came from.
    setTlsEnv(undefined, OTHER_KEY)
    await expect(readTlsFiles({ tlsCert: CERT })).rejects.toThrow(new RegExp(`^--tls-cert ${CERT} and SANDBOX_TLS_KEY ${OTHER_KEY}: `))
    setTlsEnv(CERT, KEY)
    expect(await readTlsFiles({})).toMatchObject({ cert: expect.stringContaining('BEGIN CERTIFICATE') })
  })
})
