/**
 * stdio connector: a supervised child process per connection (argv only, never a shell; a minimal
 * inherited environment plus the entry's explicit `env`; stderr to the debug log). `env` values and
 * `args` an operator wrote with `${env:NAME}` references (config/env-references.ts) are filled in
 * from the gateway's environment here, as each child is built.
 */
import type { ChildCensus } from './child-census.js';
import type { StdioServerConfig } from '../config/schema.js';
import { expandTemplate, type Template } from '../config/env-references.js';
import type { Logger } from '../observability/logger.js';
import { buildChildEnv } from './child-env.js';
import { StdioUpstreamTransport } from './stdio-transport.js';

export function createStdioTransport(
  server: string,
  config: StdioServerConfig,
  parentEnv: Readonly<Record<string, string | undefined>>,
  logger: Logger,
  maxMessageBytes?: number,
  census?: ChildCensus,
): StdioUpstreamTransport {
  const references = config.envReferences;
  const fill = (field: string, value: string, template: Template | undefined): string => {
    if (template === undefined) return value;
    const filled = expandTemplate(template, (name) => parentEnv[name]);
    // The start refused an unset variable (config/environment.ts); one unset since is named, never guessed.
    if (!filled.ok) throw new TypeError(`servers.${server}.${field}: environment variable ${filled.variable} is not set`);
    return filled.value;
  };
  const args = config.args.map((arg, index) => fill(`args[${index}]`, arg, references?.args[index]));
  const env = Object.fromEntries(Object.entries(config.env).map(([name, value]) => [name, fill(`env.${name}`, value, references?.env[name])]));
  return new StdioUpstreamTransport({
    serverName: server,
    command: config.command,
    args,
    env: buildChildEnv(parentEnv, env),
    cwd: config.cwd,
    framing: config.framing,
    logger,
    maxMessageBytes,
    ...(census === undefined ? {} : { census }),
  });
}
