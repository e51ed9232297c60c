import { CliError } from './cli-error.js'

/**
 * Refuses a host written as in a URL, before it is looked up as a name (which would fail as
 * "ENOTFOUND", naming no fix): `[::1]`, `127.0.0.1:4010`, `http://127.0.0.1`. SOURCE is the flag
 * or variable that gave it.
 */
export function checkHostShape(host: string, source: string): void {
  const shown = JSON.stringify(host)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) throw new CliError(`invalid ${source} ${shown}: give a host name or address, not a URL`)
  const bracketed = /^\[([^\]]*)\]$/.exec(host)
  if (bracketed) throw new CliError(`invalid ${source} ${shown}: write an IPv6 address without brackets (${bracketed[1]})`)
  // One colon: a name or IPv4 address with a port (an IPv6 address has at least two).
  const withPort = /^([^:]+):(\d+)$/.exec(host)
  if (withPort) throw new CliError(`invalid ${source} ${shown}: give the port with --port (--host ${withPort[1]} --port ${withPort[2]})`)
}
