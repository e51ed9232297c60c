/**
 * A small pure string hash for sandbox wallet addresses. Not cryptographic: it only has to be
 * deterministic, well spread and free of node:crypto so the domain stays pure.
 */

/** 32-bit FNV-1a over the UTF-16 code units of `text`, starting from `seed`. */
function hashFnv1a(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/** murmur3's finalizer: FNV-1a alone leaves low bits weakly mixed for similar inputs. */
function mixBits(value: number): number {
  let h = value
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Derives `length` lowercase hex characters from `text`; same text, same output. */
export function hashToHex(text: string, length: number): string {
  let out = ''
  for (let block = 0; out.length < length; block++) {
    out += mixBits(hashFnv1a(text, Math.imul(block + 1, 0x9e3779b9))).toString(16).padStart(8, '0')
  }
  return out.slice(0, length)
}
