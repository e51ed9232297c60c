import { readFile } from 'node:fs/promises'
import { CliError } from './cli-error.js'
import { readPathSetting } from './options.js'
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
  // Set in the environment, a file is named by its variable: that is where to look for the path.
  const { value: certPath, source: certSource } = readPathSetting(flags.tlsCert, '--tls-cert', 'SANDBOX_TLS_CERT')
  const { value: keyPath, source: keySource } = readPathSetting(flags.tlsKey, '--tls-key', 'SANDBOX_TLS_KEY')
  if (certPath === undefined && keyPath === undefined) return undefined
  if (certPath === undefined || keyPath === undefined) {
    if (flags.tlsCert === undefined && flags.tlsKey === undefined) {
      const [given, flag, missing] = certPath === undefined ? ['SANDBOX_TLS_KEY', '--tls-cert', 'SANDBOX_TLS_CERT'] : ['SANDBOX_TLS_CERT', '--tls-key', 'SANDBOX_TLS_KEY']
      throw new CliError(`${given} is set, and https needs both files: give ${flag} or ${missing} too, or unset ${given} for plain http`)
    }
    throw new CliError(`--tls-cert and --tls-key go together: give ${certPath === undefined ? '--tls-cert (the certificate)' : '--tls-key (its private key)'} too, or neither for plain http`)
  }
  const pair = { cert: await readPem(certSource, certPath), key: await readPem(keySource, keyPath) }
  const { checkTlsPair } = await import('../server/tls-pair.js')
  try {
    return checkTlsPair(pair)
  } catch (error) {
    throw new CliError(`${certSource} ${certPath} and ${keySource} ${keyPath}: ${(error as Error).message}`, { cause: error })
  }
}
