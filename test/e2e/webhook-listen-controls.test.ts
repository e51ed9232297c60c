import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, startNodeProcess } from '../helpers/cli.js'

afterEach(killAll)

const listen = () => startNodeProcess([BIN, 'webhook', 'listen', '--port', '0', '--print-body'], /webhook listener ready: (\S+)/)

/** POSTs with raw header bytes, as any local process can (fetch and node:http refuse or re-encode them). */
function postRaw(url: string, headers: Buffer, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk })
    socket.on('error', reject)
    socket.on('close', () => resolve(answer.split('\r\n')[0]!))
    const length = Buffer.byteLength(body)
    socket.end(Buffer.concat([Buffer.from('POST /hook HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'), headers, Buffer.from(`Content-Length: ${length}\r\n\r\n${body}`)]))
  })
}

async function waitForLines(output: () => string, count: number): Promise<string[]> {
  for (let i = 0; i < 100 && output().trimEnd().split('\n').length < count; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  return output().trimEnd().split('\n')
}

describe('sandbox webhook listen --print-body', () => {
  it('shows control characters a sender put in the body and event headers as escapes, on the delivery\'s own lines', async () => {
    const listener = await listen()
    const forged = '\u001b]0;pwned\u0007\u001b[2J\r\n12:00:00 sandbox.loan.issued evt_1 signature valid → 200'
    const headers = Buffer.concat([Buffer.from('X-Service-Webhook-Event: a'), Buffer.from([0x9b]), Buffer.from('2J\r\nX-Service-Webhook-Id: evt_'), Buffer.from([0x85]), Buffer.from('x\r\n')])
    expect(await postRaw(listener.url, headers, forged)).toBe('HTTP/1.1 200 OK')
    expect(await postRaw(listener.url, Buffer.from('Content-Type: application/json\r\n'), JSON.stringify({ name: '\u009b31mred' }))).toBe('HTTP/1.1 200 OK')
    const lines = await waitForLines(listener.output, 7)
    expect(await listener.stop()).toBe(0)
    const output = listener.output()
    expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d a\\u009b2J evt_\\u0085x signature unchecked/)
    expect(lines[2]).toBe('\\u001b]0;pwned\\u0007\\u001b[2J\\r\\n12:00:00 sandbox.loan.issued evt_1 signature valid → 200')
    expect(lines[3]).toMatch(/^\d\d:\d\d:\d\d \(no event header\) - signature unchecked/)
    expect(lines.slice(4, 7)).toEqual(['{', '  "name": "\\u009b31mred"', '}'])
  })
})
