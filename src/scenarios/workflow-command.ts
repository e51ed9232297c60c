/**
 * A workflow command's message, escaped as GitHub Actions reads it (`%`, CR, LF), so a multi-line
 * message stays one command and a `%0A` written in it stays text.
 */
export function escapeWorkflowData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

/** A workflow command's property value: as a message, and `:` and `,`, which end a property. */
export function escapeWorkflowProperty(text: string): string {
  return escapeWorkflowData(text).replace(/:/g, '%3A').replace(/,/g, '%2C')
}

/**
 * `::NAME key=value,key=value::MESSAGE`, the line a GitHub Actions runner turns into an
 * annotation; properties that are undefined are left out.
 */
export function formatWorkflowCommand(name: string, properties: Record<string, string | number | undefined>, message: string): string {
  const props = Object.entries(properties).filter(([, value]) => value !== undefined).map(([key, value]) => `${key}=${escapeWorkflowProperty(String(value))}`)
  return `::${name}${props.length > 0 ? ` ${props.join(',')}` : ''}::${escapeWorkflowData(message)}`
}
