import { describe, expect, it } from 'vitest'
import { problemsOf } from '../helpers/scenario-problems.js'

describe('a request path given as a whole URL', () => {
  it('says the run puts the server before the path', () => {
    const problems = problemsOf(JSON.stringify({ name: 'n', description: 'd', steps: [{ request: { method: 'GET', path: 'http://127.0.0.1:4010/api/sandbox/config' } }] }))
    expect(problems).toEqual(['1 request.path: a path starting with /, without the server: the run puts its base URL (--base-url, or its own server) before it, "/api/sandbox/config"'])
  })
})
