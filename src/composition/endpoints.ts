/**
 * The gateway's MCP endpoints: the aggregate (every server, namespaced names) and one side
 * channel per server (`/mcp/servers/<name>`, unprefixed names), all sharing one session budget,
 * one event store and one way of sharing sessions beyond this process.
 */
import type { GatewayConfig } from '../config/schema.js';
import type { VisibilityFilter } from '../catalogue/merge.js';
import { compileToolSurfaceOptions } from '../catalogue/surface/surface-options.js';
import { ToolSurface } from '../catalogue/surface/tool-surface.js';
import { McpEndpoint } from '../inbound/endpoint.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { ScopeOptions } from '../routing/scopes.js';
import type { RequestLimiter } from '../policy/request-limits.js';
import type { GatewayEventStore } from '../session/event-store.js';
import type { SessionAdmission } from '../session/session-admission.js';
import type { SessionSharing } from '../session/session-hooks.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { GatewayError } from '../errors.js';
import type { BodyLimits } from '../inbound/body.js';

export interface EndpointsDeps {
  config: Readonly<GatewayConfig>;
  version: string;
  registry: UpstreamRegistry;
  toolFilter: VisibilityFilter;
  admission: SessionAdmission;
  eventStore: GatewayEventStore;
  sharing: SessionSharing;
  logger: Logger;
  metrics: GatewayMetrics;
  /** The policy's request rates, shared by every endpoint; absent: not limited. */
  limiter?: RequestLimiter;
  /** Body limits every endpoint reads per request (a reload swaps them); default: the config's. */
  limits?: BodyLimits;
  /** Refuses new JSON-RPC requests while the gateway drains (lifecycle/drain-gate.ts). */
  refuseRequests?: () => GatewayError | undefined;
}

export interface Endpoints {
  readonly aggregate: McpEndpoint;
  readonly sideChannels: ReadonlyMap<string, McpEndpoint>;
  /** 2025 sessions open on every endpoint. */
  sessionCount(): number;
  close(): Promise<void>;
}

export function buildEndpoints(deps: EndpointsDeps): Endpoints {
  const { config, registry, logger } = deps;
  const surfaceOptions = compileToolSurfaceOptions(config);
  const endpoint = (servers: string[], separator: string | null, label: string) => {
    const tools = new ToolSurface(surfaceOptions, {
      servers,
      instructionsOf: (server) => registry.entry(server).primary.current?.instructions,
    });
    const scope: ScopeOptions = {
      registry,
      servers,
      catalogue: { separator, toolFilter: deps.toolFilter },
      tools,
      logger,
      inputTtlMs: config.statelessPool.inputTtlMs,
      ...(deps.limiter === undefined ? {} : { limiter: deps.limiter }),
    };
    return new McpEndpoint({
      name: config.name,
      version: deps.version,
      instructions: config.instructions,
      scope,
      sessions: config.sessions,
      admission: deps.admission,
      limits: deps.limits ?? { maxBytes: config.limits.maxBodyBytes, maxDepth: config.limits.maxJsonDepth },
      logger,
      eventStore: deps.eventStore,
      sessionHooks: deps.sharing.forEndpoint(label),
      pollAfterMs: config.eventStore.pollAfterMs,
      streamAfterMs: config.eventStore.streamAfterMs,
      tasks: config.tasks,
      metrics: deps.metrics,
      ...(deps.refuseRequests === undefined ? {} : { refuseRequests: deps.refuseRequests }),
    });
  };
  const serverNames = [...registry.entries.keys()];
  const aggregate = endpoint(serverNames, config.catalogue.separator, 'aggregate');
  const sideChannels = new Map(serverNames.map((name) => [name, endpoint([name], null, `servers/${name}`)]));
  const all = [aggregate, ...sideChannels.values()];
  return {
    aggregate,
    sideChannels,
    sessionCount: () => all.reduce((sum, e) => sum + e.sessionCount, 0),
    close: async () => {
      await Promise.all(all.map((e) => e.close()));
    },
  };
}
