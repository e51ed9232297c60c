import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/index.js'
import { buildScenarioJsonSchema } from '../../src/scenarios/scenario-json-schema.js'

// The JSON Schema editors check scenario files with (`"$schema"` in a file): it must accept every
// scenario `sandbox run` accepts, and refuse the shapes it refuses.
// Ajv as a partner runs it (ajv-cli, a CI check): strict, which refuses a format no draft defines.
const validate = new Ajv({ allErrors: true }).compile(buildScenarioJsonSchema())
const base = { name: 'n', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/state' }, expect: { status: 200 } }] }

describe('the scenario JSON Schema', () => {
  it('accepts every shipped scenario, and a file that names the schema', async () => {
    const files = (await readdir(SHIPPED_SCENARIOS_DIR)).filter((file) => file.endsWith('.json'))
    expect(files.length).toBeGreaterThan(10)
    for (const file of files) {
      const scenario: unknown = JSON.parse(await readFile(join(SHIPPED_SCENARIOS_DIR, file), 'utf8'))
      expect([file, validate(scenario), validate.errors]).toEqual([file, true, null])
    }
    expect(validate({ ...base, $schema: '../node_modules/partner-sandbox/dist/scenario.schema.json' })).toBe(true)
  })

  it.each([
    ['an unknown top-level field', { ...base, stepz: [] }],
    ['no steps', { name: 'n', description: 'd', steps: [] }],
    ['an empty name', { ...base, name: '' }],
    ['a tag with capitals', { ...base, tags: ['Smoke'] }],
    ['a status given as text', { ...base, steps: [{ request: { method: 'GET', path: '/x' }, expect: { status: '200' } }] }],
    ['a method the API has not', { ...base, steps: [{ request: { method: 'PUT', path: '/x' } }] }],
    ['a path without its leading /', { ...base, steps: [{ request: { method: 'GET', path: 'api/sandbox/state' } }] }],
    ['a step of no kind', { ...base, steps: [{ name: 'what am I' }] }],
    ['an unknown field in a request', { ...base, steps: [{ request: { method: 'GET', path: '/x', header: {} } }] }],
    ['a capture into a bad variable name', { ...base, steps: [{ request: { method: 'GET', path: '/x' }, capture: { '1st': 'id' } }] }],
  ])('refuses %s', (_what, scenario) => {
    expect(validate(scenario)).toBe(false)
  })

  it('tells an editor what the main fields are for', () => {
    const schema = buildScenarioJsonSchema() as { title: string; properties: Record<string, { description?: string }> }
    expect(schema.title).toBe('partner-sandbox scenario')
    for (const field of ['name', 'description', 'tags', 'keys', 'steps']) expect(schema.properties[field]?.description, field).toBeTruthy()
  })
})
