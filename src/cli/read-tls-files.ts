import { readFile } from 'node:fs/promises'
import { CliError } from './cli-error.js'
import { expandHome } from './expand-home.js'
import { readPathVariable } from './options.js'
import type { TlsPair } from '../server/tls-pair.js'

/** The `--tls-cert` and `--tls-key` flags, or their environment variables. */
export interface TlsFlags {
  tlsCert?: string
  tlsKey?: string
}

async function readPem(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const { describeReadError } = await import('../json-text/read-json-text.js')
    throw new CliError(`cannot read ${flag} ${path}: ${describeReadError(error)}`, { cause: error })
  }
}

/**
 * The certificate and key `serve` is to answer https with, read and checked (they must belong
 * together), or undefined for plain http. One without the other is a usage error: serving plain
 * http when https was meant would fail every client later, and less clearly.
 */
export async function readTlsFiles(flags: TlsFlags): Promise<TlsPair | undefined> {
  const env = (name: string) => {
    const value = readPathVariable(name)
    return value ? expandHome(value) : undefined
  }
  const certPath = flags.tlsCert ?? env('SANDBOX_TLS_CERT')
  const keyPath = flags.tlsKey ?? env('SANDBOX_TLS_KEY')
  if (certPath === undefined && keyPath === undefined) return undefined
  if (certPath === undefined || keyPath === undefined) {
    throw new CliError(`--tls-cert and --tls-key go together: give ${certPath === undefined ? '--tls-cert (the certificate)' : '--tls-key (its private key)'} too, or neither for plain http`)
  }
  const pair = { cert: await readPem('--tls-cert', certPath), key: await readPem('--tls-key', keyPath) }
  const { checkTlsPair } = await import('../server/tls-pair.js')
  try {
    return checkTlsPair(pair)
  } catch (error) {
    throw new CliError(`--tls-cert ${certPath} and --tls-key ${keyPath}: ${(error as Error).message}`, { cause: error })
  }
}
