// Preloaded by e2e tests (NODE_OPTIONS=--import, as Yarn PnP loads .pnp.cjs) to give the CLI
// the FileHandle that Yarn PnP's patched fs.promises.open returns (Yarn 4, @yarnpkg/fslib):
// sync(), datasync(), utimes() and readv() throw "Method not implemented." there, even for a
// file outside any zip. The product has no such hook; this file is not shipped.
import { open } from 'node:fs/promises'

const handle = await open(import.meta.filename, 'r')
const prototype = Object.getPrototypeOf(handle)
await handle.close()
for (const method of ['sync', 'datasync', 'utimes', 'readv']) {
  prototype[method] = function notImplemented() {
    throw new Error('Method not implemented.')
  }
}
