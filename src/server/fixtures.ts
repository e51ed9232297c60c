import { readFileSync } from 'node:fs'
import type { DefaultPartnerProfile } from '../domain/partner.js'
import type { Balances, SandboxConfig } from '../domain/types.js'

/** The fixtures folder shipped with the package (the same relative place from src/ and dist/). */
export const FIXTURES_DIR = new URL('../../fixtures/', import.meta.url)

function readFixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, FIXTURES_DIR), 'utf8')) as T
}

/** A partner level row of fixtures/partner-levels.json. */
export interface PartnerLevel {
  level: string
  min_volume_usd: number
  reward_percent: number
}

/** Everything the server reads from fixtures/, loaded once. */
export interface Fixtures {
  config: SandboxConfig
  wallet: { balances: Balances; required_confirmations: { BTC: number; USDT: number } }
  partnerLevels: PartnerLevel[]
  partnerProfile: DefaultPartnerProfile
}

let cached: Fixtures | undefined

/** Loads the shipped fixtures (cached; callers must not mutate them). */
export function loadFixtures(): Fixtures {
  cached ??= {
    config: readFixture('config.json'),
    wallet: readFixture('wallet.json'),
    partnerLevels: readFixture('partner-levels.json'),
    partnerProfile: readFixture('partner-profile.json'),
  }
  return cached
}
