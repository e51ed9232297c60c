import { readFileSync } from 'node:fs'

/** This package's name and version, as its package.json gives them. */
export interface PackageInfo {
  name: string
  version: string
}

let info: PackageInfo | undefined

/** This package's name and version, read once (a package.json that cannot be read gives placeholders). */
export function readThisPackage(): PackageInfo {
  if (info === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Partial<PackageInfo>
      info = { name: pkg.name ?? 'partner-sandbox', version: pkg.version ?? '(unknown version)' }
    } catch {
      info = { name: 'partner-sandbox', version: '(unknown version)' }
    }
  }
  return info
}

/** `partner-sandbox 0.1.0`: this package as a marker and a refusal name it. */
export function describeThisVersion(): string {
  const { name, version } = readThisPackage()
  return `${name} ${version}`
}
