// Preloaded by e2e tests (`node --import`) to see which modules a CLI command loads: every file://
// module the process loads is appended, one URL a line, to the file RECORD_MODULES names. Loading
// the whole server for a listing makes a command wait ~0.5 s for nothing. Not shipped.
import { appendFileSync } from 'node:fs'
import { register } from 'node:module'
import { isMainThread } from 'node:worker_threads'

// Preloaded, this file registers itself; registered, it runs on the loader's own thread.
if (isMainThread) register(import.meta.url)

/** The module loader hook: records the URL, then loads as usual. */
export async function load(url, context, next) {
  if (process.env.RECORD_MODULES && url.startsWith('file:')) appendFileSync(process.env.RECORD_MODULES, `${url}\n`)
  return next(url, context)
}
