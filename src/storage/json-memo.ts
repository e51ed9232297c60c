/**
 * JSON text of objects already serialized. State objects are immutable values (a change builds a
 * new object), and many are reached from several places of a document: a loan sits in the book
 * and in the event that announced it. Each such object is turned into text once, however many
 * saves and deliveries include it.
 */
const texts = new WeakMap<object, string>()

/** The JSON text of `value`, made by `stringify` the first time this object is asked for. */
export function stringifyOnce<T extends object>(value: T, stringify: (value: T) => string = JSON.stringify): string {
  let text = texts.get(value)
  if (text === undefined) texts.set(value, (text = stringify(value)))
  return text
}

/** Adds `fields` (already JSON, `"name":value,...`) to the JSON text of an object. */
export function appendJsonFields(objectJson: string, fields: string): string {
  return objectJson === '{}' ? `{${fields}}` : `${objectJson.slice(0, -1)},${fields}}`
}

/**
 * The JSON text of a list whose elements are made once each (stringifyOnce). Concatenation rather
 * than join: V8 then links the element texts instead of copying them, so the cost is the number of
 * elements, not their size (the copy is made once, by whoever finally reads the text).
 */
export function stringifyListOnce<T extends object>(items: readonly T[], stringify: (item: T) => string = JSON.stringify): string {
  let text = '['
  for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ',') + stringifyOnce(items[i]!, stringify)
  return `${text}]`
}
