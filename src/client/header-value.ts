/** What an HTTP header value cannot hold: a character above U+00FF, a line break, NUL or another control. */
export const NOT_IN_HEADER = /[^\t\x20-\x7e\x80-\xff]/

/** Whether `value` can be sent as an HTTP header value (the client refuses any other before sending). */
export function canSendInHeader(value: string): boolean {
  return !NOT_IN_HEADER.test(value)
}
