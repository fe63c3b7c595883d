/**
 * Builds a running gateway from a parsed config: the upstream registry (required servers must
 * come up, or this rejects), the endpoints, the Hono app, and the HTTP listener bound to the
 * configured address only. The config's policy is wired in here: Host and Origin allowlists,
 * denied tools, the variables `envHeaders` may read, body/depth/header limits, session bounds,
 * and the bind rule (a non-loopback address needs authentication or `acknowledgedNoAuth`).
 * `close()` stops accepting, closes every session and reaps every child.
 */
import { isIP, type AddressInfo } from 'node:net';
import { createServer, type RequestListener, type Server as HttpServer, type ServerOptions } from 'node:http';
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import { ConfigError, errorResponse, GatewayError } from './errors.js';
import { checkBind } from './inbound/bind-check.js';
import { listenFailure } from './inbound/listen-failure.js';
import { withLowerCaseHost } from './inbound/header-lines.js';
import type { Authenticator } from './inbound/auth/authenticate.js';
import { createEgressDispatcher } from './net/egress-guard.js';
import type { GatewayConfig, ServerConfig } from './config/schema.js';
import { compileDeniedTools } from './policy/denied-tools.js';
import { loopbackOrigins } from './policy/origin-check.js';
import { compilePolicyRules } from './policy/policy-rules.js';
import { compileToolFilter } from './policy/tool-filter.js';
import type { VisibilityFilter } from './catalogue/merge.js';
import type { ScopeOptions } from './routing/scopes.js';
import { compileSessionServersGate, sideChannelGate } from './config/session-servers.js';
import { sessionPlugin } from './customizations/session-plugin.js';
import { compileToolSurfaceOptions } from './catalogue/surface/surface-options.js';
import { ToolSurface } from './catalogue/surface/tool-surface.js';
import { McpEndpoint } from './inbound/endpoint.js';
import { createEventStore } from './session/event-store.js';
import { SessionAdmission } from './session/session-admission.js';
import { clusterKeys } from './cluster/cluster-keys.js';
import { clusterFromConfig } from './cluster/from-config.js';
import type { Logger } from './observability/logger.js';
import { warnAboutMissingEnabledTools } from './upstream/enabled-tools-check.js';
import { UpstreamRegistry } from './upstream/registry.js';
import { loadPlugins, type LoadedPlugins } from './plugins/plugin-servers.js';
import { customizationListFor } from './customizations/from-gateway.js';
import { GatewayMetrics } from './observability/metrics.js';
import { countRestarts } from './upstream/restart-counter.js';

export const GATEWAY_VERSION = '0.1.0';

export interface GatewayOptions {
  config: Readonly<GatewayConfig>;
  logger: Logger;
  /** The process environment (children inherit a minimal subset; envHeaders read from it). */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Reads the address the listener actually bound (default `server.address()`). Tests substitute
   * one to exercise the bind refusal without ever binding a non-loopback interface.
   */
  addressOf?: (server: HttpServer) => AddressInfo;
  /** How long a client may take to send a whole request (default 30 s; tests shorten it). */
  requestTimeoutMs?: number;
}

export interface RunningGateway {
  /** The MCP URL on the address actually bound. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Per-server enabled/disabled lists AND the policy's denied globs: one predicate for list and call. */
function compileVisibility(config: Readonly<GatewayConfig>, servers: Readonly<Record<string, ServerConfig>>): VisibilityFilter {
  const filters = new Map(
    Object.entries(servers).map(([name, server]) => [
      name,
      compileToolFilter({ enabledTools: server.enabledTools, disabledTools: server.disabledTools }),
    ]),
  );
  const policyAllows = compileDeniedTools(config.policy.deniedTools);
  return (server, name, exposed) => (filters.get(server)?.(name) ?? false) && policyAllows(server, name, exposed);
}

/**
 * The variables `envHeaders` may read at run time: those the config names that the policy
 * allows (parseConfig refused any other). The connector never reads a variable not listed here.
 */
function allowedEnvNames(config: Readonly<GatewayConfig>): string[] {
  const rules = compilePolicyRules(config.policy);
  const names = new Set<string>();
  for (const server of Object.values(config.servers)) {
    if (server.transport === 'stdio') continue;
    for (const variable of Object.values(server.envHeaders)) {
      if (rules.envHeaderAllowed(variable)) names.add(variable);
    }
  }
  return [...names];
}

/** One line per plugin that did not load cleanly (never a value from its files), and directory problems. */
function logPlugins(loaded: LoadedPlugins, logger: Logger): void {
  for (const problem of loaded.problems) logger.warn({ problem }, 'plugin directory problem');
  for (const plugin of loaded.plugins) {
    const running = plugin.servers.filter((s) => s.runs).length;
    if (plugin.load.kind === 'loaded') logger.info({ plugin: plugin.declaration.name, servers: running }, 'plugin loaded');
    else logger.warn({ plugin: plugin.declaration.name, load: plugin.load.kind, servers: running, reason: plugin.load.message }, 'plugin not fully loaded');
  }
}

function refuseBind(address: string, config: Readonly<GatewayConfig>): GatewayError | undefined {
  const bind = checkBind({ address, authConfigured: config.auth !== undefined, acknowledgedNoAuth: config.policy.acknowledgedNoAuth });
  return bind.ok ? undefined : new GatewayError('BIND_REFUSED', bind.message);
}

/**
 * Compiles the `auth` block once, at start: a token variable that is unset is a configuration
 * error naming the variable (never its value), before any upstream is started.
 */
async function compileAuthentication(
  config: Readonly<GatewayConfig>,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Promise<Authenticator | undefined> {
  if (config.auth === undefined) return undefined;
  // Loaded only when configured: the JWT stack (jose) costs memory a loopback gateway never uses.
  const { compileAuthenticator } = await import('./inbound/auth/authenticate.js');
  try {
    return compileAuthenticator(config.auth, { readEnv: (name) => env[name], logger });
  } catch (error) {
    if (error instanceof TypeError) throw new ConfigError([`auth: ${error.message}`]);
    throw error;
  }
}

type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

function listen(fetch: FetchHandler, host: string, port: number, maxHeaderSize: number, requestTimeoutMs: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    // Request headers over the policy's limit get 431 from node:http before any handler runs.
    const serverOptions = { maxHeaderSize, connectionsCheckingInterval: Math.min(5_000, Math.ceil(requestTimeoutMs / 4)) };
    const createHostCaseServer = ((options: ServerOptions, listener: RequestListener) =>
      createServer(options, withLowerCaseHost(listener))) as unknown as typeof createServer;
    const server = serve({ fetch, hostname: host, port, serverOptions, createServer: createHostCaseServer }, () => resolve(server as HttpServer)) as HttpServer;
    server.once('error', reject);
    // Slow clients are cut: headers within 10 s, the whole request (headers and body) within
    // 30 s. Node's requestTimeout bounds receiving the request only; a long SSE response that
    // follows it is not affected (measured).
    server.headersTimeout = Math.min(10_000, requestTimeoutMs);
    server.requestTimeout = requestTimeoutMs;
    server.keepAliveTimeout = 5_000;
  });
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, logger, env } = options;
  // Fail fast on a literal non-loopback host, before any child is spawned; the authoritative
  // check runs on the address actually bound, below.
  if (isIP(config.listen.host) !== 0) {
    const refused = refuseBind(config.listen.host, config);
    if (refused !== undefined) throw refused;
  }
  const authenticator = await compileAuthentication(config, env, logger);
  // One registry per gateway: gateways sharing a process never share a series.
  const metrics = new GatewayMetrics();
  // Resumability (docs/decisions.md): one event store for every endpoint's sessions, closed last.
  const keys = clusterKeys(config.eventStore.keyPrefix);
  const eventStore = await createEventStore(config.eventStore, {
    logger,
    maxSessions: config.sessions.max, // the session cap is gateway-wide
    historyTtlMs: config.sessions.idleTimeoutMs,
    keyPrefix: keys.events, // cluster: every key under one root
  });
  // Plugins are the least trusted layer: their servers join the config's under `<plugin>.<server>`.
  const plugins = await loadPlugins(config);
  logPlugins(plugins, logger);
  const servers = { ...plugins.servers, ...config.servers };
  const registry = new UpstreamRegistry({
    servers,
    statelessPool: config.statelessPool,
    maxSessionChildren: config.sessions.maxChildrenPerServer,
    principalIdleTimeoutMs: config.sessions.childIdleTimeoutMs,
    logger,
    onLeaseWait: (server) => metrics.leaseWaited(server),
    deps: {
      parentEnv: env,
      readEnv: (name) => env[name],
      allowedEnvNames: allowedEnvNames(config),
      maxMessageBytes: config.limits.maxUpstreamMessageBytes,
      dispatcherFor: (name, server) =>
        createEgressDispatcher({
          server: name,
          allowPrivateNetwork: server.allowPrivateNetwork,
          connectTimeoutMs: server.connectTimeoutMs,
          logger,
          onRefusal: (range) => metrics.egressRefused(name, range),
        }),
    },
  });

  // The listener opens before any upstream starts: a port in use, or a bind the policy refuses,
  // is reported without a child ever being spawned. Until the app is built (it needs the bound
  // port for the default Origin allowlist) every request is answered 503.
  const starting = new GatewayError('STARTING', 'the gateway is starting its upstream servers; retry shortly', { retryAfterMs: 1_000 });
  let handler: FetchHandler = () => errorResponse(starting);
  let http: HttpServer;
  try {
    http = await listen((request, env) => handler(request, env), config.listen.host, config.listen.port, config.limits.maxHeaderBytes, options.requestTimeoutMs ?? 30_000);
  } catch (error) {
    await eventStore.close();
    throw listenFailure(config.listen.host, config.listen.port, error);
  }
  const stopListening = async () => {
    const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await stopped;
  };
  const address = (options.addressOf ?? ((server) => server.address() as AddressInfo))(http);
  const refused = refuseBind(address.address, config);
  if (refused !== undefined) {
    await Promise.all([stopListening(), eventStore.close()]);
    throw refused;
  }

  // Subscribed before the first connection attempt, like the customisation list below.
  const stopCountingRestarts = countRestarts(registry, (server) => metrics.upstreamRestarted(server));
  // Subscribed before the first connection attempt, so the list sees every state from `starting` on.
  const customizations = await customizationListFor(config, plugins, registry);
  try {
    await registry.start();
  } catch (error) {
    customizations.close();
    await Promise.all([stopListening(), registry.close()]);
    await eventStore.close(); // event store
    throw error;
  }
  let cluster: Awaited<ReturnType<typeof clusterFromConfig>>;
  try {
    await eventStore.start(); // event store
    cluster = await clusterFromConfig(config, keys, env, logger); // cluster: replicas sharing the redis store
  } catch (error) {
    customizations.close();
    await Promise.all([stopListening(), registry.close()]);
    await eventStore.close();
    throw error;
  }
  const sessionStore = cluster?.wrapStore(eventStore) ?? eventStore;
  void warnAboutMissingEnabledTools(registry, logger); // once each tool list is known

  // One session budget and initialize rate for every endpoint and every adopted session.
  const admission = new SessionAdmission({
    max: config.sessions.max,
    maxPerPrincipal: config.sessions.maxPerPrincipal,
    initializePerMinute: config.sessions.initializePerMinute,
    logger,
  });
  const toolFilter = compileVisibility(config, servers);
  const serverNames = [...registry.entries.keys()];
  const surfaceOptions = compileToolSurfaceOptions(config);
  const policyAllows = compileDeniedTools(config.policy.deniedTools);
  const sessionServers = { gate: compileSessionServersGate(config.policy), policyAllows };
  const endpoint = (servers: string[], separator: string | null, label: string) => {
    const tools = new ToolSurface(surfaceOptions, {
      servers,
      instructionsOf: (server) => registry.entry(server).primary.current?.instructions,
    });
    const scope: ScopeOptions = {
      registry,
      servers,
      catalogue: { separator, toolFilter },
      tools,
      logger,
      inputTtlMs: config.statelessPool.inputTtlMs,
      sessionServers: label === 'aggregate' ? sessionServers : { gate: sideChannelGate, policyAllows },
    };
    return new McpEndpoint({
      name: config.name,
      version: GATEWAY_VERSION,
      instructions: config.instructions,
      scope,
      sessions: config.sessions,
      admission,
      limits: { maxBytes: config.limits.maxBodyBytes, maxDepth: config.limits.maxJsonDepth },
      logger,
      eventStore: sessionStore,
      ...(cluster === undefined ? {} : { cluster: cluster.forEndpoint(label) }),
      pollAfterMs: config.eventStore.pollAfterMs,
      streamAfterMs: config.eventStore.streamAfterMs,
      tasks: config.tasks,
      metrics,
    });
  };
  const aggregate = endpoint(serverNames, config.catalogue.separator, 'aggregate');
  const sideChannels = new Map(serverNames.map((name) => [name, endpoint([name], null, `servers/${name}`)]));

  const app = createApp({
    path: config.listen.path,
    aggregate,
    sideChannels,
    registry,
    allowedHosts: config.policy.allowedHosts,
    allowedOrigins: config.policy.allowedOrigins ?? loopbackOrigins(address.port),
    authenticator,
    legacySse: config.policy.legacySse.inbound,
    logger,
    customizations,
    sessionPlugin: (sessionId, principal) => {
      const brought = aggregate.broughtBy(sessionId, principal);
      return brought === undefined ? undefined : sessionPlugin(sessionId, brought, customizations);
    },
    metrics,
  });
  metrics.attach({
    legacySessions: () => [aggregate, ...sideChannels.values()].reduce((sum, e) => sum + e.sessionCount, 0),
    upstreams: () => registry.status(),
    stdioChildren: () => registry.stdioChildren(),
    eventHistory: () => eventStore.retained(),
  });
  handler = (request, env) => app.fetch(request, env);
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  await cluster?.start(`http://${hostForUrl}:${address.port}`); // cluster: announce, heartbeat
  customizations.setChannelBase(`http://${hostForUrl}:${address.port}${config.listen.path === '/' ? '' : config.listen.path}`);
  let closing: Promise<void> | undefined;

  return {
    url: `http://${hostForUrl}:${address.port}${config.listen.path}`,
    port: address.port,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
        customizations.close(); // ends every watch stream
        stopCountingRestarts();
        await cluster?.close(); // cluster: hand leases back first; sessions then close keeping history
        await Promise.all([aggregate.close(), ...[...sideChannels.values()].map((e) => e.close())]);
        await registry.close();
        await eventStore.close(); // event store
        await authenticator?.close();
        http.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
