/**
 * The candidate a mistyped word most likely meant (`loan_flow` -> `loan-flow`, `memroy` ->
 * `memory`), or undefined when none is close: at most one edit (an insertion, deletion,
 * substitution or swap of neighbours) for every 3 characters of the word, at least 1 and at most 3.
 * Stricter than commander's 40% likeness, which offers `flow` for `foo`. A tie keeps the first.
 */
export function findClosestMatch(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)))
  let best: { candidate: string; distance: number } | undefined
  for (const candidate of candidates) {
    // The lengths alone bound the edits from below: a 1 MB value sent as an action costs nothing.
    if (candidate === word || Math.abs(candidate.length - word.length) > limit) continue
    const distance = countEdits(word.toLowerCase(), candidate.toLowerCase())
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance }
  }
  return best?.candidate
}

/** Optimal string alignment distance: Levenshtein plus the swap of two neighbouring characters. */
function countEdits(a: string, b: string): number {
  // Rows of the edit table: two before the current one are needed for a swap.
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1)
      current.push(value)
    }
    before = previous
    previous = current
  }
  return previous[b.length]!
}

/** ` (did you mean X?)` for a close candidate, else nothing: the tail of an unknown-value message. */
export function suggestClosest(word: string, candidates: readonly string[]): string {
  const match = findClosestMatch(word, candidates)
  return match === undefined ? '' : ` (did you mean ${match}?)`
}
