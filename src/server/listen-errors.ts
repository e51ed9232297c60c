/**
 * Errors of listening on a port, shared by `listenSandbox` and the webhook listener. Each carries
 * its port or host as fields, so the CLI can word it with the flags that fix it (cli-error.ts).
 */
export interface ListenError extends Error {
  code: 'EADDRINUSE' | 'EADDRNOTAVAIL' | 'EACCES' | 'UNSAFE_PORT'
  host: string
  port?: number
  /** Why `host` cannot be listened on (the system's error code). */
  reason?: string
  /** For EACCES: why the port was refused and which one to pick instead, worded for this system (explainPortDenied). */
  denied?: { why: string; instead: string }
}

/** The port is taken by another process. */
export function createPortInUseError(port: number, host: string, cause?: unknown): ListenError {
  const message = `port ${port} on ${host} is already in use; pick another port (0 = any free port) or stop the other process`
  return Object.assign(new Error(message, { cause }), { code: 'EADDRINUSE' as const, port, host })
}

/**
 * A port browsers and fetch() refuse to connect to (the fetch standard's blocked ports: 6000,
 * 6665-6669, 10080, ...): listhen will not listen there, and this project's own client could not
 * reach it.
 */
export function createPortUnsafeError(port: number, host: string): ListenError {
  const message = `port ${port} is one that browsers and fetch() refuse to connect to (a blocked port of the fetch standard, https://fetch.spec.whatwg.org/#port-blocking); pick another port (0 = any free port)`
  return Object.assign(new Error(message), { code: 'UNSAFE_PORT' as const, port, host })
}

/**
 * Why listening on a port was refused (EACCES), and which port to pick instead. Windows has no
 * privileged ports: there it is a port in a range Hyper-V, WSL or Docker reserved, or one another
 * program bound for itself alone, whatever its number.
 */
export function explainPortDenied(platform: NodeJS.Platform = process.platform): { why: string; instead: string } {
  if (platform === 'win32') {
    return { why: 'is refused by Windows (EACCES): a port of a range Hyper-V, WSL or Docker reserved (netsh interface ipv4 show excludedportrange protocol=tcp), or one another program holds for itself', instead: 'pick another' }
  }
  return { why: 'needs privileges this process does not have (ports below 1024 are for root)', instead: 'pick one from 1024 up' }
}

/** The port needs privileges this process lacks (below 1024 without root), or Windows keeps it. */
export function createPortDeniedError(port: number, host: string, cause?: unknown, platform: NodeJS.Platform = process.platform): ListenError {
  const denied = explainPortDenied(platform)
  const message = platform === 'win32'
    ? `port ${port} on ${host} ${denied.why}: ${denied.instead}, or 0 for any free port`
    : `port ${port} on ${host} needs privileges this process does not have (EACCES; ports below 1024 are for root): pick one from 1024 up, or 0 for any free port`
  return Object.assign(new Error(message, { cause }), { code: 'EACCES' as const, port, host, denied })
}

/** Nothing can listen on `host`: an address this machine does not have, or a name that does not resolve. */
export function createHostUnusableError(host: string, reason: string, cause?: unknown): ListenError {
  const message = `cannot listen on host ${host} (${reason}): give an address of this machine, e.g. 127.0.0.1, or 0.0.0.0 for every interface`
  return Object.assign(new Error(message, { cause }), { code: 'EADDRNOTAVAIL' as const, host, reason })
}

/**
 * A failed `listen()` as a ListenError: a busy port, a privileged one, or else a host this
 * machine cannot listen on (an address it does not have, a name that does not resolve).
 */
export function toListenError(error: NodeJS.ErrnoException, port: number, host: string): ListenError {
  if (error.code === 'EADDRINUSE') return createPortInUseError(port, host, error)
  if (error.code === 'EACCES') return createPortDeniedError(port, host, error)
  return createHostUnusableError(host, error.code ?? error.message, error)
}
