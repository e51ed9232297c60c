import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createDocStore } from '../../src/storage/index.js'

describe('a document write that fails', () => {
  it('is read back from storage next, not from the cache: a write that timed out may still have landed', async () => {
    const storage = createStorage()
    let landThenFail = false
    const unsure = {
      getItemRaw: (key: string) => storage.getItemRaw(key),
      setItem: async (key: string, value: unknown) => {
        await storage.setItem(key, value as string)
        if (landThenFail) throw new Error('Command timed out')
      },
      hasItem: (key: string) => storage.hasItem(key),
      removeItem: (key: string) => storage.removeItem(key),
      getKeys: (base: string) => storage.getKeys(base),
    }
    const docs = createDocStore<{ v: number }>(unsure as never, { prefix: 'session' })
    await docs.write('k', { v: 1 })
    expect(await docs.read('k')).toEqual({ v: 1 })
    landThenFail = true
    await expect(docs.write('k', { v: 2 })).rejects.toThrow()
    expect(await docs.read('k')).toEqual({ v: 2 })
    docs.stage('k', { v: 3 })
    await expect(docs.write('k', { v: 4 })).rejects.toThrow()
    expect([docs.isStaged('k'), await docs.read('k')]).toEqual([false, { v: 4 }])
  })
})
