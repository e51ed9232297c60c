import { Option, type Command } from 'commander'

interface OpenApiFlags {
  output?: string
}

async function runOpenApi(flags: OpenApiFlags): Promise<void> {
  const { buildOpenApiDocument } = await import('../../openapi/build-document.js')
  const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`
  if (!flags.output) return void process.stdout.write(text)
  const { writeOutputFile } = await import('../output-file.js')
  await writeOutputFile(flags.output, text, 'the OpenAPI document')
}

/** `sandbox openapi`: the OpenAPI 3.1 document that `serve` also answers at /api/sandbox/openapi.json. */
export function registerOpenApi(program: Command): void {
  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the API (also served at /api/sandbox/openapi.json)')
    .addOption(new Option('--output <file>', 'write it to FILE instead of stdout'))
    .action((flags: OpenApiFlags) => runOpenApi(flags))
}
