// Preloaded by e2e tests (`node --import`) to give the built CLI a bug: an error nobody
// anticipated, to see how it is reported. The product has no such hook; this file is not shipped.
// INJECT_FAULT is one of:
//   MODULE:FUNCTION  that builtin function throws a TypeError (e.g. crypto:randomBytes)
//   uncaught:MS      a timer throws after MS ms, outside any promise chain
//   rejection:MS     a promise nobody awaits rejects after MS ms
import { createRequire, syncBuiltinESMExports } from 'node:module'

const [where, what] = (process.env.INJECT_FAULT ?? '').split(':')
const fault = () => new TypeError(`injected fault (${process.env.INJECT_FAULT})`)

if (where === 'uncaught') {
  setTimeout(() => { throw fault() }, Number(what)).unref()
} else if (where === 'rejection') {
  setTimeout(() => void Promise.reject(fault()), Number(what)).unref()
} else if (where && what) {
  const builtin = createRequire(import.meta.url)(where)
  builtin[what] = () => { throw fault() }
  // Named ESM imports of builtins (`import { randomBytes } from 'node:crypto'`) see the change too.
  syncBuiltinESMExports()
}
