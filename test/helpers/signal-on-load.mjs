// Preloaded by e2e tests (`node --import`): sends SIGNAL_ON_LOAD (SIGTERM, SIGINT) to this process
// as the module whose URL ends with SIGNAL_ON_LOAD_MODULE starts loading, so a test can signal the
// CLI at one exact moment of its start instead of after a guessed delay. Not shipped.
import { register } from 'node:module'
import { isMainThread } from 'node:worker_threads'

// Preloaded, this file registers itself; registered, it runs on the loader's own thread.
if (isMainThread) register(import.meta.url)

let sent = false

/** The module loader hook: signals once, as the named module is asked for, then loads as usual. */
export async function load(url, context, next) {
  const { SIGNAL_ON_LOAD: signal, SIGNAL_ON_LOAD_MODULE: module } = process.env
  if (!sent && signal && module && url.endsWith(module)) {
    sent = true
    process.kill(process.pid, signal)
  }
  return next(url, context)
}
