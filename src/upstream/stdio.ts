/**
 * stdio connector: a supervised child process per connection (argv only, never a shell; a minimal
 * inherited environment plus the entry's explicit `env`; stderr to the debug log).
 */
import type { ChildCensus } from './child-census.js';
import type { StdioServerConfig } from '../config/schema.js';
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
  return new StdioUpstreamTransport({
    serverName: server,
    command: config.command,
    args: [...config.args],
    env: buildChildEnv(parentEnv, config.env),
    cwd: config.cwd,
    framing: config.framing,
    logger,
    maxMessageBytes,
    ...(census === undefined ? {} : { census }),
  });
}
