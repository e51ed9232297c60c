import { isUint8Array } from 'node:util/types'

/**
 * Whether VALUE is a Uint8Array (a Buffer included), whatever realm made it. `instanceof
 * Uint8Array` is false across realms: in a jsdom test environment the global Uint8Array is the
 * window's, while the Buffers of Node's fs, http and TextEncoder are Node's own.
 */
export function isBytes(value: unknown): value is Uint8Array {
  return isUint8Array(value)
}
