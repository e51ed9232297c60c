import { describe, expect, it } from 'vitest'
import { showAnswerExcerpt } from '../../src/cli/answer-excerpt.js'

describe('webhook verify\'s excerpt of an answer', () => {
  it('keeps the message of an HTML error page (Express\'s), its entities decoded, on one line', () => {
    const page = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>TypeError: express.raw({ type: &#39;application/json&#39; }) &amp; more<br> &nbsp; &nbsp;at readWebhookBody (file:///app/x.js:1:1)</pre>\n</body>\n</html>\n'
    expect(showAnswerExcerpt(page)).toBe('Error TypeError: express.raw({ type: \'application/json\' }) & more at readWebhookBody (file:///app/x.js:1:1)')
  })

  it('shows a JSON error (Fastify\'s) as it is, cut at 300 characters, and nothing for an empty answer', () => {
    const fastify = JSON.stringify({ statusCode: 500, error: 'Internal Server Error', message: `the webhook body must be the raw request body; ${'x'.repeat(400)}` })
    const shown = showAnswerExcerpt(fastify)!
    expect(shown).toHaveLength(300)
    expect(shown).toMatch(/^\{"statusCode":500,"error":"Internal Server Error","message":"the webhook body must be the raw request body; x+\.\.\.$/)
    expect(showAnswerExcerpt('')).toBeUndefined()
    expect(showAnswerExcerpt(' \n ')).toBeUndefined()
    expect(showAnswerExcerpt(null)).toBeUndefined()
  })

  it('escapes control characters, so an answer cannot recolour the terminal or forge a line', () => {
    expect(showAnswerExcerpt('bad\u001b[32m ✓ ok\r\nnext')).toBe('bad\\u001b[32m ✓ ok next')
  })
})
