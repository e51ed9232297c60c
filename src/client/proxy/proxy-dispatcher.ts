import type { Dispatcher, ProxyAgent } from 'undici'
import { findProxyFor, hasProxy, readProxySettings, type ProxyChoice, type ProxySettings } from './proxy-settings.js'

type Undici = typeof import('undici')

/**
 * Sends each request directly or through the proxy its URL takes (findProxyFor). undici's own
 * EnvHttpProxyAgent reads NO_PROXY by exact name only and proxies 127.0.0.1 too; this follows
 * Go's rules, which partners' other tools (stripe-cli, the CI runners) already follow.
 */
function defineProxyRouter({ Agent, Dispatcher, ProxyAgent }: Undici) {
  return class ProxyRouter extends Dispatcher {
    readonly #settings: ProxySettings
    readonly #direct = new Agent()
    readonly #proxies = new Map<string, ProxyAgent>()

    constructor(settings: ProxySettings) {
      super()
      this.#settings = settings
    }

    #agentFor(choice: ProxyChoice): ProxyAgent {
      let agent = this.#proxies.get(choice.url.href)
      if (!agent) {
        // proxyTunnel false: an http:// request goes to the proxy as an absolute-form request, as
        // curl sends it (proxies commonly refuse CONNECT to any port but 443); https:// still tunnels.
        agent = new ProxyAgent({ uri: choice.url.href, proxyTunnel: false })
        this.#proxies.set(choice.url.href, agent)
      }
      return agent
    }

    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const choice = options.origin === undefined ? undefined : findProxyFor(this.#settings, new URL(String(options.origin)))
      return (choice ? this.#agentFor(choice) : this.#direct).dispatch(options, handler)
    }

    #all(): Dispatcher[] {
      return [this.#direct, ...this.#proxies.values()]
    }

    override close(): Promise<void>
    override close(callback: () => void): void
    override close(callback?: () => void): Promise<void> | void {
      const done = Promise.all(this.#all().map((agent) => agent.close())).then(() => undefined)
      if (!callback) return done
      void done.then(callback)
    }

    override destroy(): Promise<void>
    override destroy(err: Error | null): Promise<void>
    override destroy(callback: () => void): void
    override destroy(err: Error | null, callback: () => void): void
    override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
      const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null)
      const then = typeof errOrCallback === 'function' ? errOrCallback : callback
      const done = Promise.all(this.#all().map((agent) => agent.destroy(err))).then(() => undefined)
      if (!then) return done
      void done.then(then)
    }
  }
}

/**
 * A fetch dispatcher that sends each request through the proxy SETTINGS give its URL, or directly.
 * undici is loaded here, not at start: it takes ~80 ms, and most runs have no proxy.
 */
export async function createProxyDispatcher(settings: ProxySettings): Promise<Dispatcher> {
  const ProxyRouter = defineProxyRouter(await import('undici'))
  return new ProxyRouter(settings)
}

/**
 * Makes this process's fetch (the client, `runScenarios`) honour HTTPS_PROXY, HTTP_PROXY and
 * NO_PROXY: Node 20's fetch ignores them. Returns the settings read, or undefined when no proxy is
 * set (nothing is changed then). Throws ProxySettingsError for a variable that cannot be used.
 */
export async function useProxyFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ProxySettings | undefined> {
  const settings = readProxySettings(env)
  if (!hasProxy(settings)) return undefined
  const { setGlobalDispatcher } = await import('undici')
  setGlobalDispatcher(await createProxyDispatcher(settings))
  return settings
}
