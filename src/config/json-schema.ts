/**
 * The JSON Schema of a gateway config file, generated from the zod schema (the only definition
 * of config), for editors: a file with `"$schema": "…/schema/gateway.schema.json"` gets
 * completion and checking. It describes the gateway's own form (`servers` entries with
 * `transport`); the shorthand the loader also accepts (`mcpServers`, `type`, an entry with only
 * `command` or `url`) is not in it. `schema/gateway.schema.json` is this output, kept equal by a
 * test; `portcullis schema` prints it.
 */
import { z } from 'zod';
import { gatewayConfigSchema } from './schema.js';

export function gatewayJsonSchema(): Record<string, unknown> {
  // Input side: fields with defaults are optional, as in a file a person writes.
  const generated = z.toJSONSchema(gatewayConfigSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  const properties = (generated.properties ?? {}) as Record<string, unknown>;
  return {
    $schema: generated.$schema,
    title: 'Portcullis gateway configuration',
    description: 'A Portcullis config file (JSON with comments). See docs/reference.md, section "Running it for real", and policies/README.md.',
    ...generated,
    properties: {
      $schema: { type: 'string', description: 'Where editors find this schema; ignored by the gateway.' },
      inputs: {
        type: 'array',
        description: 'VS Code\'s inputs. The gateway cannot prompt: an ${input:ID} reads the environment variable its entry names in "portcullis": { "env": "NAME" }, and is refused without one.',
        maxItems: 256,
        items: {
          type: 'object',
          required: ['id'],
          properties: {
            id: { type: 'string', minLength: 1 },
            portcullis: { type: 'object', required: ['env'], additionalProperties: false, properties: { env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } } },
          },
        },
      },
      ...properties,
    },
  };
}

/** The schema file's text: stable key order as generated, two-space indent, final newline. */
export function gatewayJsonSchemaText(): string {
  return `${JSON.stringify(gatewayJsonSchema(), null, 2)}\n`;
}
