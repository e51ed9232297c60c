import { adviseOnUntrustedCertificate, NOT_YET_VALID_ADVICE } from '../text/certificate-advice.js'

/**
 * The ACL rule a redis user needs for the sandbox: its keys, and the commands it sends (reads,
 * writes, SCAN, the lease's EVAL, PING/SELECT, and INFO for the client's ready check).
 */
export const REDIS_ACL_RULE = '~sandbox:* +@read +@write +@keyspace +@scripting +@connection +info'

/** The first error a failed start saw that says more than those after it, which follow from it. */
export function pickStartReason(previous: string | undefined, next: string): string {
  // A refused AUTH is followed by the NOAUTH of the SELECT the client sends next (a database
  // other than 0): the refusal is what there is to fix.
  if (previous && /^WRONGPASS/.test(previous) && /^NOAUTH/.test(next)) return previous
  // A port where something else answers: the client closes the connection on the reply it cannot
  // parse, and a command sent meanwhile fails with "Stream isn't writeable", which said nothing.
  if (previous && /^Protocol error/.test(previous)) return previous
  // The ready check, failed because the connection closed: the error that closed it says why.
  if (previous && /^Reached the max retries per request limit/.test(next)) return previous
  return next
}

/** The reason of a start whose connection was closed, without an error, before redis answered. */
const CLOSED_SILENTLY = 'connection closed without an answer'

/**
 * A failure's message as a start error shows it: without the client's request for a bug report
 * (its words for a port where something else answers) or the arguments redis echoes after an
 * unknown command (the lease's whole Lua script).
 */
export function shortenReason(message: string): string {
  // The client's words for a connection closed before any answer (no error of its own) name its option, not what happened.
  if (/^Reached the max retries per request limit/.test(message)) return CLOSED_SILENTLY
  return message.replace(/ Please report this\.$/, '').replace(/, with args beginning with: .*$/s, '')
}

/**
 * What to do about a failed start, by the reason redis or the network gave. `owner` false: a tool
 * (`sandbox logs`, `keys reset`), which must reach the redis the server stores in, not another.
 */
export function adviseOn(reason: string, tls: boolean, owner: boolean): string {
  if (/^NOAUTH/.test(reason)) return 'it asks for a password: put it in the URL, redis://:PASSWORD@HOST:PORT/DB (redis://USER:PASSWORD@HOST:PORT/DB for an ACL user)'
  if (/^WRONGPASS/.test(reason)) return 'check the user and password in the URL'
  if (/^NOPERM/.test(reason)) return `the URL's redis user may not do all that the sandbox needs: grant it ACL SETUSER USER ${REDIS_ACL_RULE}`
  if (/DB index is out of range/.test(reason)) return 'give a database number the server has (0-15 unless redis.conf sets `databases`)'
  // Checked before the trust advice below, which a certificate for another name or past its
  // date would not cure.
  if (/ALTNAME/.test(reason)) return 'its TLS certificate is for another host name: use in the URL a name (or IP address) that the certificate lists'
  if (/CERT_HAS_EXPIRED/.test(reason)) return 'its TLS certificate has expired: renew it on the redis server (or check this machine\'s clock)'
  if (/CERT_NOT_YET_VALID/.test(reason)) return NOT_YET_VALID_ADVICE
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(reason)) return adviseOnUntrustedCertificate()
  // Something other than redis on that port (a web server, ssh): the client's own words ask for a bug report.
  if (/^Protocol error/.test(reason)) return 'what answers on that port is not redis: check the host and port in the URL'
  if (/max number of clients reached/.test(reason)) return 'it has as many clients as its maxclients allows: close some (CLIENT LIST shows them) or raise maxclients'
  if (/^DENIED/.test(reason)) return 'it takes connections only from its own machine while its default user has no password: set one (requirepass) and give it in the URL, redis://:PASSWORD@HOST:PORT/DB'
  if (/^MISCONF/.test(reason)) return 'it refuses writes until it can save its snapshot again: see its log (a full disk, a dir it may not write in), then retry'
  if (/^READONLY/.test(reason)) return 'it is a read-only replica: give the URL of its primary'
  if (/^ERR unknown command 'eval'/i.test(reason)) return 'it does not take EVAL (disabled or renamed), which the sandbox needs for the lease that keeps a second server off the database: use a redis that runs Lua scripts'
  // A sentinel's port (it answers the client's INFO, then refuses EXISTS), or a proxy's.
  if (/^ERR unknown command/i.test(reason)) return 'it does not take a command every redis server takes: check that the port is a redis server\'s, not a sentinel\'s (26379 by default) or a proxy\'s'
  if (reason === 'ENOTFOUND' || reason === 'EAI_AGAIN') return 'no such host: check the host name in the URL'
  // Connected, but nothing came back: a stopped or overloaded redis, or a port that waits for the client to speak a protocol of its own.
  if (/^Command timed out/.test(reason)) return 'it took the connection but did not answer: check that the port is a redis server\'s and that the server is not stopped (SIGSTOP) or overloaded'
  // A plain port never answers a TLS hello, and a TLS port drops a plain client at once.
  if (tls && reason === 'ETIMEDOUT') return 'no TLS answer: if that port serves plain redis, use redis:// instead of rediss://; otherwise check the host and port'
  // A published container port (docker-proxy, kubectl port-forward) takes the connection and closes it while nothing runs behind it.
  if (reason === CLOSED_SILENTLY) return 'something took the connection and closed it at once: check the port in the URL, or, for a port a container (docker, kubectl port-forward) publishes, that the redis behind it is running'
  if (!tls && reason === 'ECONNRESET') return 'it closed the connection at once: if that port speaks TLS, use rediss:// instead of redis://'
  if (!owner) return 'start it, or check that the URL is the --storage your sandbox serve uses'
  return 'start it, or use another storage (--storage fs or memory)'
}
