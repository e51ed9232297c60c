import { createSandbox, listenSandbox } from 'partner-sandbox'

export default async function startSandbox() {
  const sandbox = await createSandbox() // memory storage: every run starts empty
  const listener = await listenSandbox(sandbox) // any free port on 127.0.0.1
  globalThis.sandboxUnderTest = { sandbox, listener }
  process.env.SANDBOX_BASE_URL = listener.url // the test files' processes inherit it
}
