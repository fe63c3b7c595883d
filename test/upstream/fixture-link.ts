/**
 * Real upstream parts for the upstream/ unit tests: the conformance fixture as a stdio child
 * (built to dist/ by `npm run build`), its parsed server config, and links to it. Children are
 * closed through the links that own them.
 */
import { parseConfig } from '../../src/config/load.js';
import type { ServerConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/observability/logger.js';
import type { DownstreamSink, RpcMessage } from '../../src/rpc/sink.js';
import { createConnector, type ConnectorDeps } from '../../src/upstream/connector.js';
import { UpstreamLink } from '../../src/upstream/link.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { newMarker } from '../integration/harness/paths.js';

export const logger = silentLogger();

export const deps: ConnectorDeps = {
  parentEnv: process.env,
  readEnv: (name) => process.env[name],
  allowedEnvNames: () => [],
  dispatcherFor: () => {
    throw new Error('no HTTP upstream in these tests');
  },
};

/** Parsed server configs (schema defaults filled in) for `servers`. */
export function serverConfigs(servers: Record<string, Record<string, unknown>>): Record<string, ServerConfig> {
  return parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers }).servers;
}

/** The fixture over stdio, as a parsed server entry. */
export function fixtureConfig(extra: Record<string, unknown> = {}): ServerConfig {
  return serverConfigs({ fx: stdioServer(newMarker(), extra) }).fx!;
}

/** A fresh link to a fresh fixture child. */
export function connectFixture(config: ServerConfig = fixtureConfig(), options: { owner?: DownstreamSink; exclusive?: boolean } = {}): Promise<UpstreamLink> {
  const connector = createConnector('fx', config, deps, logger);
  return UpstreamLink.connect({ server: 'fx', transport: connector.transport, negotiation: connector.negotiation, requestTimeoutMs: 10_000, logger, ...options });
}

/** A sink that records what reaches it, in order; server→client requests are refused. */
export function recordingSink(): DownstreamSink & { seen: RpcMessage[] } {
  const seen: RpcMessage[] = [];
  return {
    seen,
    canRequest: false,
    notify: async (message) => void seen.push(message),
    request: async () => {
      throw new Error('this sink takes no requests');
    },
  };
}
