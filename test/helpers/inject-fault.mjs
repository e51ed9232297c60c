// Preloaded by e2e tests (`node --import`) to give the built CLI a bug: an error nobody
// anticipated, to see how it is reported. The product has no such hook; this file is not shipped.
// INJECT_FAULT is one of:
//   MODULE:FUNCTION  that builtin function throws a TypeError (e.g. crypto:randomBytes)
//   uncaught:MS      a timer throws MS ms after the first outgoing connection, outside any promise chain
//   rejection:MS     a promise nobody awaits rejects MS ms after the first outgoing connection
// Timed from the first connection, not from the start: on a busy machine the CLI took longer than
// the MS to load, and the fault came before the command ran.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createRequire, syncBuiltinESMExports } from 'node:module'

const [where, what] = (process.env.INJECT_FAULT ?? '').split(':')
const fault = () => new TypeError(`injected fault (${process.env.INJECT_FAULT})`)

/** Calls `act` MS ms after this process first opens a client connection. */
function afterFirstConnection(act) {
  const onSocket = () => {
    unsubscribe('net.client.socket', onSocket)
    setTimeout(act, Number(what)).unref()
  }
  subscribe('net.client.socket', onSocket)
}

if (where === 'uncaught') {
  afterFirstConnection(() => { throw fault() })
} else if (where === 'rejection') {
  afterFirstConnection(() => void Promise.reject(fault()))
} else if (where && what) {
  const builtin = createRequire(import.meta.url)(where)
  builtin[what] = () => { throw fault() }
  // Named ESM imports of builtins (`import { randomBytes } from 'node:crypto'`) see the change too.
  syncBuiltinESMExports()
}
