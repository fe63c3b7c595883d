/**
 * Builds a running gateway from a parsed config: one composition of parts opened in a fixed
 * order — the HTTP listener (bound to the configured address only, before anything else opens),
 * the authenticator, the event store, the upstream registry (required servers must come up, or
 * this rejects), the endpoints, the way sessions are shared (a cluster replica's, or none), the
 * Hono app — each noting how it closes (composition/closers.ts). `close()`, and a start that
 * fails part way, close what was opened in reverse order. The config's policy is wired in here:
 * Host and Origin allowlists, denied tools, the variables `envHeaders` may read, body/depth/header
 * limits, session bounds, and the bind rule (a non-loopback address needs authentication or
 * `acknowledgedNoAuth`).
 */
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { createApp } from './app.js';
import { loadAgents } from './plugins/agent-set.js';
import { canonicalUrls } from './inbound/announced-server.js';
import type { GatewayConfig } from './config/schema.js';
import { loopbackOrigins } from './policy/origin-check.js';
import { createEgressDispatcher } from './net/egress-guard.js';
import { createEventStore } from './session/event-store.js';
import { SessionAdmission } from './session/session-admission.js';
import { clusterKeys } from './cluster/cluster-keys.js';
import { sessionSharingFromConfig } from './cluster/from-config.js';
import type { Logger } from './observability/logger.js';
import { warnAboutMissingEnabledTools } from './upstream/enabled-tools-check.js';
import { warnAboutShadowedResources } from './upstream/resource-shadowing.js';
import { UpstreamRegistry } from './upstream/registry.js';
import { loadPlugins } from './plugins/plugin-servers.js';
import { customizationsFor, readEnablement } from './customizations/from-gateway.js';
import { sessionPlugin } from './customizations/session-plugin.js';
import { GatewayMetrics } from './observability/metrics.js';
import { countRestarts } from './upstream/restart-counter.js';
import { Closers } from './composition/closers.js';
import { compileRequestLimiter } from './policy/request-limits.js';
import { memoryBuckets } from './policy/memory-buckets.js';
import { compileAccessPolicy, hidesNothing } from './policy/access-policy.js';
import { upstreamCredentials } from './upstream/credentials/upstream-credentials.js';
import { SubjectTokens } from './upstream/credentials/subject-tokens.js';
import { UserTokens } from './upstream/credentials/user-tokens.js';
import { buildEndpoints } from './composition/endpoints.js';
import { serverSetChanges } from './composition/server-set-changes.js';
import { compileAuthentication, logPlugins, refuseBind } from './composition/gateway-policy.js';
import { compileSettings, liveSettings } from './composition/live-settings.js';
import { listen } from './composition/listener.js';
import { loadConfigFile } from './config/load.js';
import { ConfigError, GatewayError } from './errors.js';
import { preflight } from './composition/preflight.js';
import { DrainGate } from './lifecycle/drain-gate.js';
import { drainGateway, type DrainOutcome } from './lifecycle/drain.js';
import { Reloader, type ReloadOutcome, type ReloadTrigger } from './lifecycle/reload.js';
import { AdminSources } from './admin/admin-status.js';
import { visibleCounts } from './routing/visible-counts.js';
import { primaryToolNames } from './routing/primaries.js';
import { isLoopbackAddress } from './inbound/bind-check.js';
import { integrityAuditRecord, toolIntegrityFor } from './integrity/from-config.js';
import { judgeOnConnect } from './composition/integrity-on-connect.js';
import { resolveTelemetry, startTelemetry, type Telemetry } from './composition/telemetry.js';
import { reportStartProgress } from './composition/start-progress.js';
import { GATEWAY_VERSION } from './composition/package-version.js';

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
  /**
   * Reads the configuration anew for a reload (default: the file `config` was read from, when it
   * was). The CLI passes one that applies its `--port` / `--host` again.
   */
  reloadConfig?: () => Promise<Readonly<GatewayConfig>>;
}

export interface RunningGateway {
  /** The MCP URL on the address actually bound. */
  readonly url: string;
  /** The canonical MCP URL clients are told (config `listen.publicUrl`, else `url`): the Ready line's. */
  readonly publicUrl: string;
  readonly port: number;
  /**
   * Graceful drain (lifecycle/drain.ts): refuse new requests, give the calls in flight up to
   * `timeoutMs` (default `lifecycle.drainTimeoutMs`), then end the streams still open. `close()`
   * follows it.
   */
  drain(timeoutMs?: number): Promise<DrainOutcome>;
  /** Hot reload (lifecycle/reload.ts): re-read the configuration and apply what changed; never rejects. */
  reload(trigger?: ReloadTrigger): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

/** The config after the preflight rules: its warnings logged, its problems thrown as one `ConfigError`. */
function preflighted(config: Readonly<GatewayConfig>, env: GatewayOptions['env'], logger: Logger): Readonly<GatewayConfig> {
  const checked = preflight(config, env);
  // A refused bind alone keeps its own code (BIND_REFUSED, docs/errors.md), as the bind check on the address bound answers.
  if (checked.bindRefused !== undefined && checked.problems.length === 1) throw checked.bindRefused;
  if (checked.problems.length > 0) throw new ConfigError([...checked.problems]);
  for (const warning of checked.warnings) logger.warn({ warning }, 'configuration warning');
  return checked.config;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { logger, env } = options;
  // The rules `check` runs too (composition/preflight.ts), before anything opens: the variables
  // server entries read are set, a `url` reference filled in and judged, a literal non-loopback
  // host refused (the authoritative bind check runs on the address actually bound, below).
  const config = preflighted(options.config, env, logger);
  // Traces and audit (composition/telemetry.ts): a bad block or OTEL_* variable stops here, before anything opens.
  const telemetrySettings = resolveTelemetry(config, env);
  const closers = new Closers(logger);
  return closers.compose(async () => {
    // Started once the servers are known, but its closer is the first added, so it runs last of
    // all (after the listener's connections end): every span and audit line is written, on a
    // failed start as on shutdown.
    let telemetry: Telemetry | undefined;
    closers.add('telemetry', () => telemetry?.close());
    // The listener opens first (composition/listener.ts): a port in use, or a bind the policy
    // refuses, is reported before anything else opens; until the app is built every request is
    // answered 503. Its connections are the last thing shutdown ends, after every stream has.
    const listener = await listen({
      host: config.listen.host,
      port: config.listen.port,
      maxHeaderBytes: config.limits.maxHeaderBytes,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      ...(options.addressOf === undefined ? {} : { addressOf: options.addressOf }),
    });
    closers.add('listener', () => listener.close());
    const { address } = listener;
    const refused = refuseBind(address.address, config);
    if (refused !== undefined) throw refused;
    const authenticator = await compileAuthentication(config, env, logger);
    if (authenticator !== undefined) closers.add('authenticator', () => authenticator.close());
    // One registry per gateway: gateways sharing a process never share a series.
    const metrics = new GatewayMetrics();
    // Resumability (docs/decisions.md): one event store for every endpoint's sessions, closed after them.
    const keys = clusterKeys(config.eventStore.keyPrefix);
    const eventStore = await createEventStore(config.eventStore, {
      logger,
      maxSessions: config.sessions.max, // the session cap is gateway-wide
      historyTtlMs: config.sessions.idleTimeoutMs,
      keyPrefix: keys.events, // every key the replicas share under one root
    });
    closers.add('event store', () => eventStore.close());
    // Plugins are the least trusted layer: their servers join the config's under `<plugin>.<server>`.
    const plugins = await loadPlugins(config);
    logPlugins(plugins, logger);
    // Agents: the plugins' and the gateway's own directory (bad files reported and skipped).
    const agents = await loadAgents({ ...(config.agents === undefined ? {} : { agents: config.agents }), plugins: plugins.plugins });
    for (const problem of agents.diagnostics) logger.warn({ problem }, 'agent file problem');
    // Stored enablement decisions before the registry: a server disabled globally is never started.
    const decisions = await readEnablement(config, plugins, logger);
    closers.add('enablement store', () => decisions.store.close()); // after the list: pending writes finished
    const servers = { ...plugins.servers, ...config.servers };
    // What a reload changes without a restart, swapped whole (composition/live-settings.ts).
    const live = liveSettings(compileSettings(config, servers));
    telemetry = startTelemetry(telemetrySettings, {
      config,
      logger,
      version: GATEWAY_VERSION,
      toolFilters: live.toolFilters,
      disabledServers: new Set(plugins.plugins.flatMap((p) => p.servers.filter((s) => !s.runs).map((s) => s.declaration.name))),
      onEgressRefusal: (range) => metrics.egressRefused('otlp-traces', range),
    });
    // Callers' verified tokens are kept only when a server exchanges them (tokenExchange).
    const subjectTokens = Object.values(servers).some((s) => s.transport !== 'stdio' && s.upstreamAuth?.kind === 'tokenExchange') ? new SubjectTokens() : undefined;
    // Sessions' own tokens for `perUser` servers: in memory, dropped with their sessions.
    const userTokens = new UserTokens();
    const subjectIssuer = config.auth?.kind === 'jwt' ? config.auth.issuer : config.auth?.kind === 'oauth' && config.auth.issuers.length === 1 ? config.auth.issuers[0]!.issuer : undefined;
    const credentials = upstreamCredentials((name) => env[name], logger, {
      userTokens,
      ...(subjectTokens === undefined ? {} : { subjectTokens }),
      ...(subjectIssuer === undefined ? {} : { subjectIssuer }),
    });
    closers.add('upstream credentials', () => credentials.close());
    const registry = new UpstreamRegistry({
      servers,
      statelessPool: config.statelessPool,
      maxSessionChildren: config.sessions.maxChildrenPerServer,
      childIdleTimeoutMs: config.sessions.childIdleTimeoutMs,
      logger,
      userTokens,
      onLeaseWait: (server) => metrics.leaseWaited(server),
      onServerStopped: (server) => credentials.forget(server),
      deps: {
        parentEnv: env,
        readEnv: (name) => env[name],
        allowedEnvNames: () => live.current.allowedEnvNames,
        sseFallbackAllowed: config.policy.legacySse.upstream,
        maxMessageBytes: config.limits.maxUpstreamMessageBytes,
        tokenSourceFor: (name, server, owner) => credentials.tokenSourceFor(name, server, owner),
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
    closers.add('upstream registry', () => registry.close());
    // Tool integrity: pins read before the first listing; every change heard by every live
    // connection of its server (sessions and 2026 listeners hear list_changed), audited and counted.
    const { integrity, store: pinStore } = await toolIntegrityFor(config, Object.keys(servers), (name) => registry.entries.has(name), () => primaryToolNames(registry), logger, (event) => {
      metrics.integrityEvent(event.kind);
      telemetry?.audit?.integrity(integrityAuditRecord(event));
    });
    closers.add('tool pin store', () => pinStore.close());
    const stopAnnouncing = integrity.onChange((server) => {
      if (!registry.entries.has(server)) return;
      for (const link of registry.entry(server).changes.live()) link.announceListChanged('tools');
    });
    closers.add('tool integrity', stopAnnouncing);
    const connectJudge = judgeOnConnect(registry, integrity, logger);
    closers.add('tool integrity on connect', connectJudge.stop);


    // Subscribed before the first connection attempt, so each sees every state from `starting` on.
    const stopCountingRestarts = countRestarts(registry, (server) => metrics.upstreamRestarted(server));
    closers.add('restart counter', stopCountingRestarts);
    // Servers the global decisions disable are stopped before the registry starts, so they never start.
    const customizations = await customizationsFor(config, plugins, registry, decisions, agents, userTokens);
    closers.add('customizations', () => customizations.close()); // ends every watch stream
    const stopProgress = reportStartProgress(registry, logger);
    try {
      await registry.start();
    } finally {
      stopProgress();
    }
    // Before the first client: its handshake answers the instructions judged here (pinned on first use).
    await connectJudge.first();
    await eventStore.start();
    void warnAboutMissingEnabledTools(registry, logger); // once each tool list is known
    void warnAboutShadowedResources(registry, logger); // once each resource list is known

    // Replicas of a cluster share sessions through the redis store; a gateway alone shares none.
    const sharing = await sessionSharingFromConfig(config, keys, env, logger);
    // Rate buckets: shared by every endpoint, and by every replica when clustered (in Redis).
    const buckets = sharing.rateBuckets?.() ?? memoryBuckets();
    // One session budget and initialize rate for every endpoint and every adopted session.
    const admission = new SessionAdmission({
      max: config.sessions.max,
      maxPerPrincipal: config.sessions.maxPerPrincipal,
      initializePerMinute: config.sessions.initializePerMinute,
      logger,
      buckets,
    });
    const limiter = compileRequestLimiter(config.policy.rateLimits, buckets);
    const urls = canonicalUrls(config.listen, address);
    // Graceful drain: every request passes the gate, which refuses new ones once draining began.
    const gate = new DrainGate();
    // Swapped whole by a reload: every list and call sees the old filters or the new, never a mix.
    const endpoints = buildEndpoints({
      agents,
      customizations: customizations.list,
      visibility: customizations.enablement,
      gatewayResources: customizations.resource,
      urls,
      ...(limiter === undefined ? {} : { limiter }),
      config,
      version: GATEWAY_VERSION,
      registry,
      toolFilter: live.visibility,
      limits: live.bodyLimits,
      refuseRequests: () => (gate.draining ? gate.refusal() : undefined),
      admission,
      eventStore: sharing.wrapStore(eventStore),
      sharing,
      logger,
      metrics,
      telemetry,
      userTokens,
      integrity,
    });
    closers.add('endpoints', () => endpoints.close()); // every session closed, every child reaped
    // Before the sessions close (which takes a while), every SSE answer still open is ended, so
    // each client sees its stream end rather than its connection cut when the listener closes.
    closers.add('open streams', () => void gate.closeStreams());

    let stopping = false;
    const configFile = config.configFile;
    const reloader = new Reloader(config, {
      load: async () => {
        const read = options.reloadConfig ?? (() => (configFile === undefined ? Promise.reject(new GatewayError('CONFIG_UNREADABLE', 'this gateway was not started from a config file')) : loadConfigFile(configFile)));
        return preflighted(await read(), env, logger);
      },
      serversOf: (next) => ({ ...plugins.servers, ...next.servers }),
      swap: (next, nextServers) => {
        live.swap(compileSettings(next, nextServers));
      },
      ...serverSetChanges({ registry, endpoints, customizations, logger, configServers: (): string[] => Object.keys(reloader.config.servers) }),
      registry,
      refusal: () => (gate.draining || stopping ? 'the gateway is shutting down' : undefined),
      logger,
    });
    const admin = config.admin.enabled
      ? new AdminSources({
          name: config.name,
          version: GATEWAY_VERSION,
          registry,
          urls,
          metricsPath: '/metrics',
          activity: metrics.activity,
          // What the asking admin is shown: its own listing view of the aggregate, as a client's.
          countShown: (caller) => visibleCounts(endpoints.aggregate.listingView(caller.principal, caller.access)),
          sessions: () => [
            { endpoint: 'aggregate', legacy: endpoints.aggregate.sessionCount },
            ...[...endpoints.sideChannels].map(([name, e]) => ({ endpoint: `servers/${name}`, legacy: e.sessionCount })),
          ],
          customizations: customizations.list,
          ...(telemetry.audit === undefined ? {} : { audit: telemetry.audit.recent }),
        })
      : undefined;
    if (admin !== undefined) closers.add('admin page', () => admin.close());
    const reload = async (trigger: ReloadTrigger): Promise<ReloadOutcome> => {
      const outcome = await reloader.reload(trigger);
      admin?.noteReload(outcome);
      return outcome;
    };

    const app = createApp({
      path: config.listen.path,
      aggregate: endpoints.aggregate,
      sideChannels: endpoints.sideChannels,
      agents: endpoints.agents,
      mcpUrl: urls.aggregate,
      registry,
      allowedHosts: config.policy.allowedHosts,
      allowedOrigins: config.policy.allowedOrigins ?? loopbackOrigins(address.port),
      authenticator,
      legacySse: config.policy.legacySse.inbound,
      logger,
      customizations: customizations.list,
      togglePermissions: customizations.permissions(address.address),
      ...(integrity.mode === 'off'
        ? {}
        : {
            integrity: {
              integrity,
              permissions: {
                authOn: authenticator !== undefined,
                admins: new Set(config.policy.admins),
                openToLocal: authenticator === undefined && isLoopbackAddress(address.address),
                requireAuth: config.policy.toolIntegrity.decisionsRequireAuth,
              },
            },
          }),
      userTokens,
      // The session's list shows the servers its client brought (customizations/session-plugin.ts).
      sessionPlugin: (sessionId, principal) => {
        const brought = endpoints.aggregate.broughtBy(sessionId, principal);
        return brought === undefined ? undefined : sessionPlugin(sessionId, brought, customizations.list);
      },
      metrics,
      admins: config.policy.admins,
      ...(admin === undefined
        ? {}
        : { admin: { sources: admin, reload: () => reload('admin'), authOn: authenticator !== undefined, admins: config.policy.admins, integrity: integrity.mode !== 'off' } }),
      ...(telemetry.audit === undefined ? {} : { audit: telemetry.audit }),
      ...(subjectTokens === undefined ? {} : { subjectTokens }),
      ...(config.auth?.kind === 'oauth' ? { oauth: config.auth } : {}),
      ...(config.listen.publicUrl === undefined ? {} : { publicUrl: config.listen.publicUrl }),
      ...(limiter === undefined ? {} : { limiter }),
      ...(sharing.forwardedPrincipal === undefined ? {} : { forwarded: (request: Request) => sharing.forwardedPrincipal?.(request) }),
      ...(hidesNothing(config.policy.access) ? {} : { access: compileAccessPolicy(config.policy.access) }),
    });
    metrics.attach({
      sessions2025: () => endpoints.sessionCount(),
      open2026: () => endpoints.open2026(),
      upstreams: () => registry.status(),
      stdioChildren: () => registry.stdioChildren(),
      userCredentials: () => userTokens.size,
      eventHistory: () => eventStore.retained(),
      // The registry's own servers (a removed one keeps its entry): never one a client brought.
      isServer: (name) => registry.entries.has(name),
      integrityPending: () => integrity.pendingCounts(),
    });
    const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const base = `http://${hostForUrl}:${address.port}`;
    // Closed before the endpoints: a replica hands its leases back first, so its sessions then
    // close keeping their shared history for whoever takes them over.
    closers.add('session sharing', () => sharing.close());
    await sharing.start(base);
    customizations.list.setChannelBase(urls.base);
    listener.open(gate.wrap((request, requestEnv) => app.fetch(request, requestEnv)));
    // The first thing shutdown does: no new connection from then on.
    closers.add('accepting connections', () => listener.stopAccepting());

    return {
      url: `${base}${config.listen.path}`,
      publicUrl: urls.aggregate,
      port: address.port,
      drain: (timeoutMs = config.lifecycle.drainTimeoutMs) => drainGateway(gate, timeoutMs, logger),
      reload: (trigger = 'signal') => reload(trigger),
      close: () => {
        stopping = true;
        return closers.closeAll();
      },
    };
  });
}
