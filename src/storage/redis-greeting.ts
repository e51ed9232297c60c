import { connect } from 'node:net'

/** How long a probe waits for redis to speak first; a TLS port says nothing until the client does. */
const GREETING_WAIT_MS = 500

/**
 * The error line redis writes to a connection it refuses as it accepts it (maxclients reached,
 * protected mode's DENIED), read on a connection that sends nothing, or undefined when nothing
 * like it comes. A client that sent its first command before that line arrived can see only a
 * reset (redis closed with the command unread), which says nothing of why.
 */
export function readRedisGreeting(url: string): Promise<string | undefined> {
  const parsed = new URL(url)
  // A bracketed IPv6 literal is the URL's spelling, not a host the socket can take.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = Number(parsed.port || 6379)
  return new Promise((resolve) => {
    let text = ''
    const socket = connect({ host, port })
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      const line = /^-([^\r\n]+)\r?\n/.exec(text)
      resolve(line?.[1])
    }
    const timer = setTimeout(finish, GREETING_WAIT_MS)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      if (text.includes('\n') || text.length > 512) finish()
    })
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', finish)
  })
}
