/**
 * The closed union of upstream kinds: one function picks the connector for a server entry, with an
 * exhaustive switch, so adding a kind is a compile error until every place handles it.
 */
import type { Transport } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { createSseTransport } from './sse.js';
import { createHttpTransport, type HttpConnectorDeps } from './streamable-http.js';
import { createStdioTransport } from './stdio.js';

export interface ConnectorDeps extends HttpConnectorDeps {
  /** The gateway's environment, from which a child inherits only a minimal set. */
  parentEnv: Readonly<Record<string, string | undefined>>;
}

export interface Connector {
  transport: Transport;
  negotiation: 'auto' | 'legacy';
}

export function createConnector(server: string, config: ServerConfig, deps: ConnectorDeps, logger: Logger): Connector {
  switch (config.transport) {
    case 'stdio':
      // Most stdio servers are 2025-era; probing in place would cost a timeout on silent ones.
      return { transport: createStdioTransport(server, config, deps.parentEnv, logger, deps.maxMessageBytes), negotiation: 'legacy' };
    case 'streamableHttp':
      return { transport: createHttpTransport(server, config, deps, logger), negotiation: 'auto' };
    case 'sse':
      // The transport of 2024-11-05: there is no 2026 era to probe for.
      return { transport: createSseTransport(server, config, deps, logger), negotiation: 'legacy' };
    default: {
      const unreachable: never = config;
      throw new TypeError(`unknown transport ${(unreachable as { transport: string }).transport}`);
    }
  }
}
