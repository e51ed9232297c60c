/**
 * Resolves once what was written to stdout and stderr has been handed to the OS. process.exit
 * drops what a pipe has not taken yet: a failed `sandbox run --json | jq` lost its report after
 * 65,536 bytes (the pipe's buffer).
 */
export function drainOutput(): Promise<void> {
  const drain = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => {
    if (!stream.writable || stream.writableLength === 0) return resolve()
    // Writes complete in order: this one's callback runs once every earlier one is out.
    stream.write('', () => resolve())
  })
  return Promise.all([drain(process.stdout), drain(process.stderr)]).then(() => undefined)
}
