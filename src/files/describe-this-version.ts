import { readFileSync } from 'node:fs'

let packageName: string | undefined

/** `partner-sandbox 0.1.0`: this package as a marker and a refusal name it. */
export function describeThisVersion(): string {
  if (packageName === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string }
      packageName = `${pkg.name ?? 'partner-sandbox'} ${pkg.version ?? '(unknown version)'}`
    } catch {
      packageName = 'partner-sandbox (unknown version)'
    }
  }
  return packageName
}
