// A loopback webhook receiver in its own process, for `npm run bench`: it prints the arrival time
// (process.hrtime, one monotonic clock for every process on the machine) of each loan's
// sandbox.loan.issued event, so the load generator's own event loop cannot delay the stamp.
import { createServer } from 'node:http'

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const at = process.hrtime.bigint()
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      if (event.type === 'sandbox.loan.issued') process.stdout.write(`${event.data.object.id} ${at}\n`)
    } catch {}
    res.end('ok')
  })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(`receiver ready: http://127.0.0.1:${server.address().port}/webhooks\n`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
