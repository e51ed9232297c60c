// The one grammar of a written duration (500ms, 1.5s, 30d), shared by the CLI's duration flags and
// the retry schedule, so that a value one flag takes is never refused by another.

/** Milliseconds in each unit a duration may be written in, largest first. */
export const DURATION_UNITS = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const

/** TEXT, a number and a unit, in whole milliseconds; undefined when it is not written so. */
export function readDurationText(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|[smhdw])$/i.exec(text.trim())
  return match ? Math.round(Number(match[1]) * DURATION_UNITS[match[2]!.toLowerCase() as keyof typeof DURATION_UNITS]) : undefined
}
