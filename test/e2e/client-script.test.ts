import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runScriptToEnd } from '../helpers/cli.js'

afterEach(killAll)

/** How long the script may take before the test calls it stuck: far below the minute a timer left behind would hold it. */
const END_CUTOFF_MS = 15_000

describe('createSandboxClient in a script of its own', () => {
  it('leaves nothing behind that keeps the process up: not an answered attempt\'s timer, nor a cancelled retry wait\'s', async () => {
    const dist = pathToFileURL(join(import.meta.dirname, '../../dist/index.js')).href
    const script = `
      import { createServer } from 'node:http'
      import { createSandboxClient } from ${JSON.stringify(dist)}
      const server = createServer((req, res) => req.resume().on('end', () => {
        if (req.url === '/api/sandbox/config') res.writeHead(200, { 'content-type': 'application/json' }).end('{"request_id":"req_1"}')
        else res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' }).end('{"request_id":"req_2","error_code":"SANDBOX_RATE_LIMIT_EXCEEDED"}')
      }))
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
      const baseUrl = 'http://127.0.0.1:' + server.address().port
      // Answered at once, within a minute's timeoutMs.
      const answered = createSandboxClient({ baseUrl, timeoutMs: 60_000 })
      console.log('config: ' + (await answered.getConfig()).request_id)
      // A 429 asking for a minute, its wait cancelled once begun.
      const controller = new AbortController()
      const waiting = createSandboxClient({ baseUrl, maxRetryAfterMs: 120_000, signal: controller.signal, onRetryWait: () => setImmediate(() => controller.abort(new Error('not waiting a minute'))) })
      await waiting.request({ method: 'GET', path: '/api/sandbox/state' }).then(() => console.log('state: answered'), (error) => console.log('state: ' + error.message))
      server.closeAllConnections()
      server.close()
    `
    // No process.exit in the script: a timer left by the client would keep it up for a minute.
    const { output, exitCode } = await runScriptToEnd(script, END_CUTOFF_MS)
    expect(output).toBe('config: req_1\nstate: not waiting a minute\n')
    expect(exitCode).toBe(0)
  }, 60_000)
})
