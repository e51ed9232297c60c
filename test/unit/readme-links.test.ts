import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')

/** The anchors GitHub (and npm's page) gives the README's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line)
    if (!heading) continue
    const slug = heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replaceAll(' ', '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

describe('the README', () => {
  it('links only to headings it has: every (#anchor) leads somewhere', () => {
    const anchors = headingAnchors(README)
    const links = [...README.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!)
    expect(links.length).toBeGreaterThan(10)
    expect(links.filter((link) => !anchors.has(link))).toEqual([])
  })

  it('lists every section (## heading) in its contents, in order', () => {
    const sections = README.split('\n').filter((line) => line.startsWith('## ')).map((line) => line.slice(3))
    const contents = /^\*\*Contents:\*\*([\s\S]+?)\n\n/m.exec(README)?.[1] ?? ''
    const listed = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!)
    const slugs = sections.map((title) => [...headingAnchors(`## ${title}`)][0]!)
    expect(listed.filter((anchor) => slugs.includes(anchor))).toEqual(slugs)
  })
})
