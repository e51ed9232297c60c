/**
 * What to do about a TLS certificate this machine does not trust, for `sandbox run` and a
 * rediss:// storage alike. With NODE_EXTRA_CA_CERTS set already (CI images set it to the system
 * bundle), "give its CA with NODE_EXTRA_CA_CERTS" sent the reader round in a circle, or to replace
 * a file other tools need.
 */
export function adviseOnUntrustedCertificate(): string {
  const extra = typeof process === 'undefined' ? undefined : process.env.NODE_EXTRA_CA_CERTS
  if (extra) return `its TLS certificate is not trusted here, NODE_EXTRA_CA_CERTS=${extra} included: add its CA to that file (one file, which may hold several CAs), or fix the path if Node warned at start that it could not load it`
  return 'its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem'
}

/** What to do about a certificate whose validity starts later than this machine's clock says. */
export const NOT_YET_VALID_ADVICE = 'its TLS certificate is not valid yet: check this machine\'s clock, or the dates the certificate was made with'

/**
 * What to change for a certificate the client refused: a CA to trust, unless trust is not the
 * problem (a certificate for another name, or out of its dates), where a CA would change nothing.
 */
export function describeCertificateProblem(url: string, code: string): string {
  const { hostname } = new URL(url)
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `its TLS certificate is not for ${hostname}: use a host name the certificate names in the URL, or make one that names ${hostname} (mkcert ${hostname})`
  if (code === 'CERT_HAS_EXPIRED') return 'its TLS certificate has expired: renew it (or check this machine\'s clock)'
  if (code === 'CERT_NOT_YET_VALID') return NOT_YET_VALID_ADVICE
  return adviseOnUntrustedCertificate()
}
