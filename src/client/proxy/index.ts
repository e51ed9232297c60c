export { createProxyDispatcher, useProxyFromEnvironment } from './proxy-dispatcher.js'
export { describeProxy, findProxyFor, hasProxy, readProxySettings, ProxySettingsError, type ProxyChoice, type ProxySettings } from './proxy-settings.js'
export { isLoopbackHost, parseNoProxy, shouldBypassProxy, type NoProxyRule } from './no-proxy.js'
