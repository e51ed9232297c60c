import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// Partners read the package's exports through their editor's hover: each one needs a doc comment
// where it is declared. The exports are followed from src/index.ts through the re-exports.
const INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

interface ReExport { name: string; from: string; file: string }

const read = (file: string) => readFileSync(file, 'utf8')
const sourceOf = (from: string, specifier: string) => resolve(dirname(from), specifier.replace(/\.js$/, '.ts'))

function listReExports(file: string): { named: ReExport[]; stars: string[] } {
  const text = read(file)
  const named: ReExport[] = []
  for (const match of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    for (const item of match[1]!.split(',').map((part) => part.trim().replace(/^type\s+/, '')).filter(Boolean)) {
      const [from, as] = item.split(/\s+as\s+/)
      named.push({ name: as ?? from!, from: from!, file: sourceOf(file, match[2]!) })
    }
  }
  const stars = [...text.matchAll(/export\s+(?:type\s+)?\*\s+from\s+'([^']+)'/g)].map((match) => sourceOf(file, match[1]!))
  return { named, stars }
}

/** Whether `name` is declared in `file` (or what it re-exports) right after a `/** ... *\/` comment. */
function findDeclaration(file: string, name: string): { file: string; documented: boolean } | undefined {
  const text = read(file)
  const declaration = new RegExp(`(?:^|\\n)export\\s+(?:declare\\s+)?(?:async\\s+)?(?:abstract\\s+)?(?:function\\*?|const|let|class|interface|type|enum)\\s+${name}\\b`).exec(text)
  if (declaration) return { file, documented: /\*\/\s*$/.test(text.slice(0, declaration.index + (declaration[0].startsWith('\n') ? 1 : 0))) }
  const { named, stars } = listReExports(file)
  const direct = named.find((entry) => entry.name === name)
  if (direct) return findDeclaration(direct.file, direct.from)
  for (const star of stars) {
    const found = findDeclaration(star, name)
    if (found) return found
  }
  return undefined
}

/** The names FILE exports: its own declarations, its named re-exports, and what its `export *` lines export in turn. */
function listExportedNames(file: string): string[] {
  const { named, stars } = listReExports(file)
  const declared = [...read(file).matchAll(/\nexport\s+(?:interface|type|const|function|class)\s+(\w+)/g)].map((match) => match[1]!)
  return [...new Set([...declared, ...named.map((entry) => entry.name), ...stars.flatMap(listExportedNames)])]
}

function listPublicExports(): string[] {
  return listExportedNames(INDEX)
}

describe('the library exports', () => {
  it('each have a doc comment where they are declared', () => {
    const names = listPublicExports()
    expect(names.length).toBeGreaterThan(90)
    const missing = names.filter((name) => {
      const found = findDeclaration(INDEX, name)
      return !found?.documented
    })
    expect(missing).toEqual([])
  })
})
