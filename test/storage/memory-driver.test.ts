import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createCompactMemoryDriver } from '../../src/storage/memory-driver.js'
import { createDocStore } from '../../src/storage/index.js'

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(check()).toBe(true)
}

describe('memory storage compacts quiet values', () => {
  it('compresses long text once it goes quiet and reads it back byte for byte', async () => {
    const driver = createCompactMemoryDriver({ coldMs: 20, tickMs: 10 })
    const raw = driver.getInstance!() as Map<string, unknown>
    const storage = createStorage({ driver })
    const doc = { note: 'ünïcødé — “quotes” \\ and 🚀', items: Array.from({ length: 200 }, (_, i) => ({ id: `loan_${i}`, status: 'active', amount: i * 1.5 })) }
    const text = JSON.stringify(doc)
    await storage.setItem('session:a', text)
    await storage.setItem('session:short', 'x'.repeat(10))
    expect(raw.get('session:a')).toBe(text)
    await until(() => typeof raw.get('session:a') !== 'string')
    expect(raw.get('session:short')).toBe('x'.repeat(10))
    expect(await storage.getItem('session:a')).toEqual(doc)
    expect(await storage.getItemRaw('session:a')).toBe(text)
    expect((await storage.getKeys('session')).sort()).toEqual(['session:a', 'session:short'])
    await storage.dispose()
  })

  it('serves a rewrite made after compaction, and compacts that in turn', async () => {
    const driver = createCompactMemoryDriver({ coldMs: 20, tickMs: 10 })
    const raw = driver.getInstance!() as Map<string, unknown>
    const docs = createDocStore<{ v: number; pad: string }>(createStorage({ driver }), { prefix: 'session', cacheSize: 1 })
    await docs.write('a', { v: 1, pad: 'p'.repeat(5000) })
    await until(() => typeof raw.get('session:a') !== 'string')
    await docs.write('a', { v: 2, pad: 'q'.repeat(5000) })
    await docs.write('b', { v: 3, pad: '' }) // evicts a from the cache: the next read comes from the driver
    expect(await docs.read('a')).toEqual({ v: 2, pad: 'q'.repeat(5000) })
    await until(() => typeof raw.get('session:a') !== 'string')
    expect(await docs.read('a')).toEqual({ v: 2, pad: 'q'.repeat(5000) })
    await docs.remove('a')
    expect(await docs.read('a')).toBeNull()
    driver.dispose!()
  })
})
