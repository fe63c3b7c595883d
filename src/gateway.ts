/**
 * Builds a running gateway from a parsed config: the upstream registry (required servers must
 * come up, or this rejects), the endpoints, the Hono app, and the HTTP listener bound to the
 * configured address only. `close()` stops accepting, closes every session and reaps every child.
 */
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import { createEgressDispatcher } from './net/egress-guard.js';
import type { GatewayConfig } from './config/schema.js';
import { DEFAULT_ALLOWED_HOSTS } from './policy/host-check.js';
import { loopbackOrigins } from './policy/origin-check.js';
import { compileToolFilter } from './policy/tool-filter.js';
import type { VisibilityFilter } from './routing/merge.js';
import type { ScopeOptions } from './routing/scopes.js';
import { DEFAULT_BODY_LIMITS } from './inbound/body.js';
import { McpEndpoint } from './inbound/endpoint.js';
import type { Logger } from './observability/logger.js';
import { UpstreamRegistry } from './upstream/registry.js';

export const GATEWAY_VERSION = '0.1.0';

export interface GatewayOptions {
  config: Readonly<GatewayConfig>;
  logger: Logger;
  /** The process environment (children inherit a minimal subset; envHeaders read from it). */
  env: Readonly<Record<string, string | undefined>>;
}

export interface RunningGateway {
  /** The MCP URL on the address actually bound. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function compileVisibility(config: Readonly<GatewayConfig>): VisibilityFilter {
  const filters = new Map(
    Object.entries(config.servers).map(([name, server]) => [
      name,
      compileToolFilter({ enabledTools: server.enabledTools, disabledTools: server.disabledTools }),
    ]),
  );
  return (server, name) => filters.get(server)?.(name) ?? false;
}

type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

function listen(fetch: FetchHandler, host: string, port: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }, () => resolve(server as HttpServer)) as HttpServer;
    server.once('error', reject);
    // Slow-header clients are cut; request bodies are bounded by size, and long-lived SSE
    // responses must not be cut by a whole-request timer, so requestTimeout stays off.
    server.headersTimeout = 10_000;
    server.requestTimeout = 0;
    server.keepAliveTimeout = 5_000;
  });
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, logger, env } = options;
  const registry = new UpstreamRegistry({
    servers: config.servers,
    statelessPool: config.statelessPool,
    logger,
    deps: {
      parentEnv: env,
      readEnv: (name) => env[name],
      dispatcherFor: (name, server) =>
        createEgressDispatcher({
          server: name,
          allowPrivateNetwork: server.allowPrivateNetwork,
          connectTimeoutMs: server.connectTimeoutMs,
          logger,
        }),
    },
  });

  try {
    await registry.start();
  } catch (error) {
    await registry.close();
    throw error;
  }

  const toolFilter = compileVisibility(config);
  const serverNames = [...registry.entries.keys()];
  const endpoint = (servers: string[], separator: string | null) => {
    const scope: ScopeOptions = { registry, servers, catalogue: { separator, toolFilter }, logger };
    return new McpEndpoint({
      name: config.name,
      version: GATEWAY_VERSION,
      instructions: config.instructions,
      scope,
      registry,
      sessions: config.sessions,
      limits: DEFAULT_BODY_LIMITS,
      logger,
    });
  };
  const aggregate = endpoint(serverNames, config.catalogue.separator);
  const sideChannels = new Map(serverNames.map((name) => [name, endpoint([name], null)]));

  // The app is built once the port is known: the default Origin allowlist names the bound port.
  let handler: FetchHandler = () => new Response('starting', { status: 503 });
  let http: HttpServer;
  try {
    http = await listen((request, env) => handler(request, env), config.listen.host, config.listen.port);
  } catch (error) {
    await Promise.all([aggregate.close(), ...[...sideChannels.values()].map((e) => e.close()), registry.close()]);
    throw error;
  }
  const address = http.address() as AddressInfo;
  const app = createApp({
    path: config.listen.path,
    aggregate,
    sideChannels,
    registry,
    allowedHosts: DEFAULT_ALLOWED_HOSTS,
    allowedOrigins: loopbackOrigins(address.port),
    logger,
  });
  handler = (request, env) => app.fetch(request, env);
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${hostForUrl}:${address.port}${config.listen.path}`,
    port: address.port,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
        await Promise.all([aggregate.close(), ...[...sideChannels.values()].map((e) => e.close())]);
        await registry.close();
        http.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
