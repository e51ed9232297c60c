import { CliError } from './cli-error.js'
import { CliErrorCodes } from '../errors/codes.js'

/**
 * Makes the run's requests honour HTTPS_PROXY, HTTP_PROXY and NO_PROXY, and says so when the base
 * URL goes through a proxy: a proxy a CI image sets for everything is otherwise a silent cause of
 * failures. Returns the proxy the base URL takes, described, or undefined.
 */
export async function useProxy(baseUrl: string | undefined, say: (line: string) => void): Promise<string | undefined> {
  const lib = await import('../client/proxy/index.js')
  let settings
  try {
    settings = await lib.useProxyFromEnvironment()
  } catch (error) {
    if (error instanceof lib.ProxySettingsError) throw new CliError(error.message, { code: CliErrorCodes.PROXY })
    throw error
  }
  // A base URL that does not parse is reported by the run's first request, as without a proxy.
  const url = baseUrl && URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
  const choice = settings && url ? lib.findProxyFor(settings, url) : undefined
  if (!choice) return undefined
  const described = lib.describeProxy(choice)
  say(`requests to ${url!.origin} go through the proxy ${described}`)
  return described
}
