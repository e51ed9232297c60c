/**
 * The line serve --faults puts in the proxy page of an injected 502 or 504, by which the client
 * tells that page from a real proxy's: it is the sandbox rehearsing an outage, not a proxy to look for.
 */
export const FAULT_PAGE_MARK = 'sandbox fault injection'

/** Whether TEXT, a 502 or 504's body, is the page serve --faults injected. */
export function isInjectedFaultPage(text: string): boolean {
  return text.includes(`<center>${FAULT_PAGE_MARK}</center>`)
}
