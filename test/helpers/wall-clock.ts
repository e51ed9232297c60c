/**
 * Moves this process's wall clock (`Date.now()`, `new Date()`) by an offset, as NTP stepping the
 * clock or a machine waking from sleep does, while timers and `performance.now()` run on as before.
 */
export interface WallClock {
  /** Moves the wall clock by `ms` (negative: back) from where it reads now. */
  jump(ms: number): void
  /** Puts the real `Date` back. */
  restore(): void
}

/** Installs a movable wall clock; call `restore()` when done. */
export function installWallClock(): WallClock {
  const RealDate = Date
  let offset = 0
  class MovedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset)
      else super(...(args as [string]))
    }

    static override now(): number {
      return RealDate.now() + offset
    }
  }
  globalThis.Date = MovedDate as DateConstructor
  return {
    jump: (ms) => { offset += ms },
    restore: () => { globalThis.Date = RealDate },
  }
}
