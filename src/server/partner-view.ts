import type { SandboxServices } from './services.js'
import type { SessionDoc } from './session-store.js'

/**
 * The partner block of GET state: the default profile from fixtures/, with whatever the key has
 * set. Links, levels and rewards are filled from the key's loans by the partner API issue.
 */
export function viewPartner(doc: SessionDoc, services: SandboxServices): Record<string, unknown> {
  const { referral_base_url: _base, ...profile } = services.fixtures.partnerProfile
  const levels = services.fixtures.partnerLevels
  return {
    profile: { ...profile, ...doc.partner },
    links: [],
    levels: { table: levels, current: levels[0]?.level ?? null },
    rewards: { accrued_usd: 0, paid_usd: 0, entries: [] },
  }
}
