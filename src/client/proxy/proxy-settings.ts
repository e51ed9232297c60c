import { maskCredentials } from '../../text/url-password.js'
import { parseNoProxy, shouldBypassProxy, type NoProxyRule } from './no-proxy.js'

/** A proxy from the environment, and the variable it came from (for messages). */
export interface ProxyChoice {
  url: URL
  source: string
}

/** Which proxy each kind of request takes, as the environment says. */
export interface ProxySettings {
  http?: ProxyChoice
  https?: ProxyChoice
  noProxy: NoProxyRule[]
}

/** A proxy variable that cannot be used: the message names it and says what to set instead. */
export class ProxySettingsError extends Error {
  override name = 'ProxySettingsError'
}

/** The first of NAMES that is set and not empty (an unset CI secret is an empty variable). */
function readVariable(env: NodeJS.ProcessEnv, names: readonly string[]): { value: string; source: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim()
    if (value) return { value, source: name }
  }
  return undefined
}

function parseProxyUrl(value: string, source: string): ProxyChoice {
  // `proxy.corp:3128` is how many set it; curl and Go read it as http://.
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    // Most often a password with a character a URL gives a meaning to: say how to write it.
    const encode = value.includes('@') ? '; percent-encode @, /, ? and # in the user name or password (%40, %2F, %3F, %23)' : ''
    throw new ProxySettingsError(`${source}=${maskCredentials(value)} is not a URL; set it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT)${encode}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProxySettingsError(`${source} is a ${url.protocol.slice(0, -1)} proxy; the sandbox's requests go through http:// or https:// proxies only. Set ${source} to one, or unset it to connect directly`)
  }
  if (!url.hostname) throw new ProxySettingsError(`${source}=${maskCredentials(value)} names no host; set it as http://HOST:PORT`)
  // curl and Go use a proxy URL's scheme, credentials, host and port only; undici refuses one
  // with a path ("invalid url"), which read as a proxy that is down after 4 attempts.
  url.pathname = '/'
  url.search = ''
  url.hash = ''
  return { url, source }
}

/**
 * Reads the proxy variables as curl, Go and Node's own proxy support do: `https_proxy` or
 * `HTTPS_PROXY` for https:// URLs, `http_proxy` or `HTTP_PROXY` for http:// ones (the lower-case
 * name first), and `no_proxy` / `NO_PROXY` for hosts to reach directly. `ALL_PROXY` is not read:
 * it is most often a SOCKS proxy for other tools.
 */
export function readProxySettings(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const http = readVariable(env, ['http_proxy', 'HTTP_PROXY'])
  const https = readVariable(env, ['https_proxy', 'HTTPS_PROXY'])
  return {
    ...(http ? { http: parseProxyUrl(http.value, http.source) } : {}),
    ...(https ? { https: parseProxyUrl(https.value, https.source) } : {}),
    noProxy: parseNoProxy(readVariable(env, ['no_proxy', 'NO_PROXY'])?.value),
  }
}

/** Whether any proxy is set at all. */
export function hasProxy(settings: ProxySettings): boolean {
  return settings.http !== undefined || settings.https !== undefined
}

/** The proxy a request to URL goes through, or undefined when it goes directly. */
export function findProxyFor(settings: ProxySettings, url: URL): ProxyChoice | undefined {
  const choice = url.protocol === 'https:' ? settings.https : url.protocol === 'http:' ? settings.http : undefined
  return choice && !shouldBypassProxy(url, settings.noProxy) ? choice : undefined
}

/** "http://proxy.corp:3128 (HTTPS_PROXY)", without its credentials. */
export function describeProxy(choice: ProxyChoice): string {
  const { protocol, username, password, host } = choice.url
  const user = username ? (password ? `${username}:****@` : '****@') : ''
  return `${protocol}//${user}${host} (${choice.source})`
}
