import { describe, expect, it } from 'vitest'
import { createKeyedMutex } from '../../src/storage/keyed-mutex.js'

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('createKeyedMutex', () => {
  it('runs one key strictly in order and different keys concurrently', async () => {
    const mutex = createKeyedMutex()
    const log: string[] = []
    const job = (key: string, name: string, ms: number) => mutex.run(key, async () => {
      log.push(`start ${name}`)
      await tick(ms)
      log.push(`end ${name}`)
    })
    await Promise.all([job('a', 'a1', 30), job('a', 'a2', 1), job('b', 'b1', 5)])
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'))
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'))
  })

  it('keeps going after a failure and forgets idle keys', async () => {
    const mutex = createKeyedMutex()
    const failed = mutex.run('k', async () => { throw new Error('boom') })
    const next = mutex.run('k', async () => 'next')
    await expect(failed).rejects.toThrow('boom')
    await expect(next).resolves.toBe('next')
    await mutex.idle()
    await tick(0)
    expect(mutex.activeKeys).toBe(0)
  })
})
