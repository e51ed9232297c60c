import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

describe('the partner profile email', () => {
  it('takes addresses on internationalized domains, in Unicode or in their ASCII (punycode) form', async () => {
    api = await createTestApi()
    for (const email of ['info@xn--e1afmkfd.xn--p1ai', 'info@пример.рф', 'ops@bücher.de', 'üser@example.com', "o'brien+ops@mail.example.ie", 'ops@例子.中国']) {
      const answer = await api.post('/api/sandbox/partner', { name: 'Acme', email })
      expect([answer.status, answer.body.profile?.email, answer.body.error], email).toEqual([200, email, undefined])
    }
  })

  it('still refuses what is no email address, saying what one looks like', async () => {
    api = await createTestApi()
    for (const email of ['not-an-email', 'user@example', 'a..b@example.com', '.a@example.com', 'a.@example.com', 'user@example..com', 'user@-example.com', 'user@example-.com', 'a@b.c', 'user name@example.com', 'user@exa mple.com', 'user@@example.com', '"john"@example.com', 'user@example.com.', 'user@xn--.com']) {
      const answer = await api.post('/api/sandbox/partner', { name: 'Acme', email })
      expect([answer.status, answer.body.error], email).toEqual([400, 'email must be an email address (name@example.com).'])
    }
  })
})
