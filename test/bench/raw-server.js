// Baseline for `npm run bench`: plain node:http answering a body and headers shaped like GET config.
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'

const config = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../../fixtures/config.json', import.meta.url), 'utf8'))

const server = createServer((request, response) => {
  const requestId = `req_${randomBytes(10).toString('hex')}`
  const body = JSON.stringify({ request_id: requestId, ...config })
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'x-request-id': requestId,
    'ratelimit-limit': '120',
    'ratelimit-remaining': '119',
    'ratelimit-reset': '60',
  })
  response.end(body)
})
server.listen(0, '127.0.0.1', () => {
  console.log(`raw ready: http://127.0.0.1:${server.address().port}`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
