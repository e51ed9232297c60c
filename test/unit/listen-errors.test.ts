import { describe, expect, it } from 'vitest'
import { describeListenError, toCliError } from '../../src/cli/cli-error.js'
import { createPortDeniedError } from '../../src/server/listen-errors.js'

// The refusal itself (EACCES) is tested on Linux in test/e2e/serve.test.ts; Windows's is worded here.
describe('a port the system refuses to listen on (EACCES)', () => {
  it('on Linux and macOS is a privileged port: pick one from 1024 up', () => {
    const error = createPortDeniedError(80, '127.0.0.1', undefined, 'linux')
    expect(error.message).toBe('port 80 on 127.0.0.1 needs privileges this process does not have (EACCES; ports below 1024 are for root): pick one from 1024 up, or 0 for any free port')
    expect(describeListenError(error)).toBe('port 80 on 127.0.0.1 needs privileges this process does not have (ports below 1024 are for root); pick one from 1024 up with --port (0 = any free port)')
  })

  it('on Windows, which has no privileged ports, is a reserved or exclusively held port, whatever its number', () => {
    const error = createPortDeniedError(4010, '127.0.0.1', undefined, 'win32')
    const why = 'is refused by Windows (EACCES): a port of a range Hyper-V, WSL or Docker reserved (netsh interface ipv4 show excludedportrange protocol=tcp), or one another program holds for itself'
    expect(error.message).toBe(`port 4010 on 127.0.0.1 ${why}: pick another, or 0 for any free port`)
    expect(describeListenError(error, 'SANDBOX_PORT')).toBe(`port 4010 on 127.0.0.1 ${why}; pick another with SANDBOX_PORT (0 = any free port)`)
    expect(toCliError(error)).toMatchObject({ exitCode: 2, message: `port 4010 on 127.0.0.1 ${why}; pick another with --port (0 = any free port)` })
  })
})
