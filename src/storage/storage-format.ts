import { describeThisVersion } from '../files/describe-this-version.js'
import { isBytes } from '../text/is-bytes.js'
import { StorageError } from './storage-error.js'

/**
 * The storage format this version reads and writes: session documents version 1, journals
 * `sandbox-journal v2` (and the first format), the batch, spill, request-log and marker keys it
 * names. A later version that stores anything this one would misread must write a higher number,
 * so that this one refuses the data at start instead of reading it by the wrong rules and
 * writing over it. Changes an older version can read as they are (a field it may ignore) keep it.
 */
export const STORAGE_FORMAT = 1

/** The storage key of the marker: `<data dir>/storage-format` on fs, `sandbox:storage-format` on redis. */
export const FORMAT_KEY = 'storage-format'

/** What the marker holds. */
export interface FormatMarker {
  format: number
  /** The package and version that wrote the marker, for the message of an older one. */
  written_by?: string
}

/** The marker text this version writes. */
export function formatMarkerText(): string {
  return JSON.stringify({ format: STORAGE_FORMAT, written_by: describeThisVersion() } satisfies FormatMarker)
}

/**
 * Checks a stored marker (text, or the object a driver parsed it to; null when there is none).
 * `where` names the storage ("data dir /x"), `elsewhere` the flag that picks another one, and
 * `markerName` the marker as the user would delete it there (redis prefixes its keys). Throws
 * a StorageError for a newer format, or a marker that cannot be read: this version must then
 * neither read nor write anything there.
 */
export function checkFormatMarker(stored: unknown, where: string, elsewhere: string, markerName: string = FORMAT_KEY): void {
  if (stored === null || stored === undefined) return
  let marker: Partial<FormatMarker> | undefined
  try {
    const parsed: unknown = typeof stored === 'string' || isBytes(stored) ? JSON.parse(Buffer.from(stored as string | Uint8Array).toString('utf8')) : stored
    if (typeof parsed === 'object' && parsed !== null) marker = parsed as Partial<FormatMarker>
  } catch {}
  const format = marker?.format
  if (format === STORAGE_FORMAT) return
  const self = describeThisVersion()
  if (typeof format === 'number' && Number.isInteger(format) && format > STORAGE_FORMAT) {
    // Shown only when it reads as a package and version: the text comes from storage.
    const by = typeof marker?.written_by === 'string' && /^[\w@./+ -]{1,80}$/.test(marker.written_by) ? `, by ${marker.written_by}` : ''
    throw new StorageError(`${where} was written by a newer sandbox (storage format ${format}${by}); this is ${self}, which reads format ${STORAGE_FORMAT}. Nothing was read or changed: use that newer version again, or give this one another ${elsewhere}`)
  }
  throw new StorageError(`${where} has a storage-format marker this version cannot read (${showStored(stored)}); this is ${self}, which reads format ${STORAGE_FORMAT}. Nothing was read or changed: if no newer sandbox wrote this data, delete the marker (${markerName}) and start again`)
}

/** A stored value, short enough for a message. */
function showStored(stored: unknown): string {
  const text = typeof stored === 'string' ? stored : isBytes(stored) ? Buffer.from(stored).toString('utf8') : JSON.stringify(stored)
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
}
