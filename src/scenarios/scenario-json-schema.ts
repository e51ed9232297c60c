import { z } from 'zod'
import { scenarioFileSchema } from './scenario-schema.js'

/**
 * The JSON Schema (draft-07, which editors read best) of a scenario file, from the same zod schema
 * `sandbox run` loads them with: editors that follow a file's `$schema` (VS Code, JetBrains) then
 * complete and check scenarios as they are written. The checks across fields (a variable no earlier
 * step captures, a matcher's operand) are beyond JSON Schema: `sandbox run` still makes those.
 */
export function buildScenarioJsonSchema(): Record<string, unknown> {
  const { $schema, ...schema } = z.toJSONSchema(scenarioFileSchema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
    // zod names a startsWith check `format: "starts_with"` beside the `pattern` that checks it: a
    // format no JSON Schema draft defines, which Ajv (ajv-cli, most CI validators) refuses to compile.
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === 'starts_with') delete jsonSchema.format
    },
  })
  return {
    $schema,
    title: 'partner-sandbox scenario',
    description: 'A scenario file for `sandbox run`: steps that walk the partner API and check each answer. See the README\'s "Writing a scenario".',
    ...schema,
  }
}
