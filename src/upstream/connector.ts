/**
 * The closed union of upstream kinds: one function picks the connector for a server entry, with an
 * exhaustive switch, so adding a kind is a compile error until every place handles it.
 */
import type { ChildCensus } from './child-census.js';
import type { ServerConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { createSseTransport } from './sse.js';
import { createHttpTransport, httpSessionExpired, prefer2025Handshake, type HttpConnectorDeps } from './streamable-http.js';
import { createStdioTransport } from './stdio.js';
import { AutoWire } from './auto-http.js';
import type { Wire } from './peer.js';
import type { Era } from '../rpc/era.js';

export interface ConnectorDeps extends HttpConnectorDeps {
  /** The gateway's environment, from which a child inherits only a minimal set. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Counts live stdio children (the gateway's metrics). */
  census?: ChildCensus;
  /** The policy allows HTTP+SSE upstreams (`legacySse.upstream`): `auto` may fall back to it. */
  sseFallbackAllowed?: boolean;
}

export interface Connector {
  transport: Wire;
  negotiation: 'auto' | '2025';
}

export function createConnector(server: string, config: ServerConfig, deps: ConnectorDeps, logger: Logger): Connector {
  switch (config.transport) {
    case 'stdio':
      // Most stdio servers are 2025-era; probing in place would cost a timeout on silent ones.
      return { transport: createStdioTransport(server, config, deps.parentEnv, logger, deps.maxMessageBytes, deps.census), negotiation: '2025' };
    case 'streamableHttp':
      return { transport: createHttpTransport(server, config, deps, logger), negotiation: 'auto' };
    case 'sse':
      // The transport of 2024-11-05: there is no 2026 era to probe for.
      return { transport: createSseTransport(server, config, deps, logger), negotiation: '2025' };
    case 'auto':
      return {
        transport: new AutoWire({
          server,
          http: createHttpTransport(server, config, deps, logger),
          sse: deps.sseFallbackAllowed === true ? () => createSseTransport(server, config, deps, logger) : undefined,
          logger,
        }),
        negotiation: 'auto',
      };
    default: {
      const unreachable: never = config;
      throw new TypeError(`unknown transport ${(unreachable as { transport: string }).transport}`);
    }
  }
}

/**
 * The era a connection of `config` speaks to a caller of `era`: the caller's where the kind
 * negotiates (Streamable HTTP and `auto` probe for 2026-07-28), else 2025 — a stdio connection is
 * opened with the 2025 handshake and an HTTP+SSE one has no 2026 revision to speak.
 */
export function connectionEra(config: ServerConfig, era: Era): Era {
  switch (config.transport) {
    case 'stdio':
    case 'sse':
      return '2025';
    case 'streamableHttp':
    case 'auto':
      return era;
    default: {
      const unreachable: never = config;
      throw new TypeError(`unknown transport ${(unreachable as { transport: string }).transport}`);
    }
  }
}

/**
 * Opens a 2025 session's own connection: `open` makes one attempt with a fresh connector
 * (`negotiation` overrides the connector's). stdio and HTTP+SSE servers are reached with the 2025
 * handshake already; a Streamable HTTP server is asked for it first, then negotiated with.
 */
export function connect2025<T>(config: ServerConfig, open: (negotiation?: '2025') => Promise<T>, logger: Logger): Promise<T> {
  switch (config.transport) {
    case 'stdio':
    case 'sse':
      return open();
    case 'streamableHttp':
    case 'auto':
      return prefer2025Handshake(open, logger);
    default: {
      const unreachable: never = config;
      throw new TypeError(`unknown transport ${(unreachable as { transport: string }).transport}`);
    }
  }
}

/**
 * True when `error` says the upstream forgot this connection's session, so the call may be
 * retried once on a fresh connection: an HTTP 404 from either HTTP kind; never for stdio (a child
 * that died closes its link instead).
 */
export function upstreamSessionLost(config: ServerConfig, error: unknown): boolean {
  switch (config.transport) {
    case 'stdio':
      return false;
    case 'streamableHttp':
    case 'sse':
    case 'auto':
      return httpSessionExpired(error);
    default: {
      const unreachable: never = config;
      throw new TypeError(`unknown transport ${(unreachable as { transport: string }).transport}`);
    }
  }
}
