/**
 * What the sandbox asks of its storage: the part of unstorage's `Storage` it calls, so that any
 * unstorage instance (`createStorage()`) is one. Written out rather than imported for the package's
 * type declarations: unstorage's do not type-check without skipLibCheck (its optional drivers
 * import packages a partner will not have), and every importer of this package would read them.
 */
export interface SandboxStorage {
  hasItem(key: string): Promise<boolean>
  getItem<T = unknown>(key: string): Promise<T | null>
  getItems(keys: string[]): Promise<Array<{ key: string; value: unknown }>>
  getItemRaw(key: string): Promise<unknown>
  setItem(key: string, value: unknown): Promise<void>
  removeItem(key: string): Promise<void>
  getKeys(base?: string): Promise<string[]>
  dispose(): Promise<void>
}
