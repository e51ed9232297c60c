export default async function stopSandbox() {
  const { sandbox, listener } = globalThis.sandboxUnderTest
  await listener.close()
  await sandbox.close()
}
