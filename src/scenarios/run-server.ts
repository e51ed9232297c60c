import { createSandbox } from '../server/create-sandbox.js'
import { listenSandbox } from '../server/listen.js'

/** An in-process sandbox a run talks to. */
export interface RunServer {
  /** Its base URL, without a trailing slash. */
  url: string
  close(): Promise<void>
}

/**
 * Starts the server a run without a base URL walks: memory storage, local webhooks allowed (the
 * runner's receiver is on 127.0.0.1), no rate limit, on a free port of 127.0.0.1.
 */
export async function startRunServer(): Promise<RunServer> {
  const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, allowLocalWebhooks: true, logError: () => {} })
  const listener = await listenSandbox(sandbox, { port: 0, host: '127.0.0.1' }).catch(async (error: unknown) => {
    await sandbox.close()
    throw error
  })
  return { url: listener.url.replace(/\/+$/, ''), close: async () => { await listener.close(); await sandbox.close() } }
}
