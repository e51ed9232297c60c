import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { StorageError } from '../storage/storage-error.js'
import { generateWebhookSecret } from '../webhooks/signature.js'

const FORWARD_SECRET_KEY = 'webhooks:forward-secret'

/**
 * The forward secret, created once and kept in storage so receivers keep working across restarts.
 * A stored value of another form (a newer version's) is refused rather than replaced: replaced,
 * it would be lost to that version, whose receivers check deliveries with it.
 */
export async function loadForwardSecret(storage: SandboxStorage): Promise<string> {
  const stored = await storage.getItem<unknown>(FORWARD_SECRET_KEY)
  if (typeof stored === 'string' && stored.startsWith('whsec_')) return stored
  if (stored !== null && stored !== undefined) {
    throw new StorageError(`the stored --webhook-forward-to secret is not one this version reads (a "whsec_..." text): a newer sandbox may have written it. It is left as it is: use that newer version again, or delete it (webhooks/forward-secret in the data dir, sandbox:webhooks:forward-secret in redis) to have a new one made, which receivers then need`)
  }
  const secret = generateWebhookSecret()
  await storage.setItem(FORWARD_SECRET_KEY, secret)
  return secret
}
