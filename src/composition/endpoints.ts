/**
 * The gateway's MCP endpoints: the aggregate (every server, namespaced names) and one side
 * channel per server (`/mcp/servers/<name>`, unprefixed names), all sharing one session budget,
 * one event store and one way of sharing sessions beyond this process. The aggregate and the agent
 * endpoints show the registry's roster, which grows when a reload adds a server (its sessions and
 * listeners hear `list_changed`); `addServer` opens the new server's side channel. A reload that
 * removes a server closes its side channel (`removeServer`); the aggregate and agent endpoints
 * stop showing it through the visibility every merge reads (routing/visibility.ts).
 */
import type { GatewayConfig } from '../config/schema.js';
import type { VisibilityFilter } from '../catalogue/merge.js';
import { addServerSurface, compileToolSurfaceOptions } from '../catalogue/surface/surface-options.js';
import { SegmentCache } from '../catalogue/search/segment-cache.js';
import { memoryLoadedNames } from '../naming/loaded-names.js';
import { ToolSurface } from '../catalogue/surface/tool-surface.js';
import { McpEndpoint, type EndpointOptions, type Open2026 } from '../inbound/endpoint.js';
import { AgentEndpoints } from '../agents/agent-endpoints.js';
import { agentItems, agentMeta, agentOffers, agentPrompts, agentToolFilter } from '../agents/agent-entries.js';
import { customizationsFor } from '../customizations/access-filter.js';
import { announcedServer, type canonicalUrls } from '../inbound/announced-server.js';
import type { loadAgents } from '../plugins/agent-set.js';
import type { CustomizationList } from '../customizations/customization-list.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { GatewayResources } from '../routing/gateway-resources.js';
import type { ScopeOptions, SessionServersOptions } from '../routing/scopes/scope-options.js';
import type { ServerVisibility } from '../routing/visibility.js';
import { agentEndpointGate, compileSessionServersGate, sideChannelGate } from '../config/session-servers.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import type { RequestLimiter } from '../policy/request-limits.js';
import type { GatewayEventStore } from '../session/event-store.js';
import type { SessionAdmission } from '../session/session-admission.js';
import type { SessionSharing } from '../session/session-hooks.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { ServerRoster } from '../upstream/server-roster.js';
import type { ServerConfig } from '../config/schema.js';
import type { GatewayError } from '../errors.js';
import type { BodyLimits } from '../inbound/body.js';
import type { Telemetry } from './telemetry.js';
import type { UserTokens } from '../upstream/credentials/user-tokens.js';
import type { ToolIntegrity } from '../integrity/tool-integrity.js';

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
  /** The plugins' and the gateway's agents: one endpoint each, and prompts/resource on the aggregate. */
  agents: Awaited<ReturnType<typeof loadAgents>>;
  customizations: CustomizationList;
  /** Which servers each caller sees (enablement), on every endpoint; absent: every server, always. */
  visibility?: ServerVisibility;
  /** The gateway's own resources (`portcullis://customizations`), on the aggregate only. */
  gatewayResources?: GatewayResources;
  /** The canonical URLs clients are told (`listen.publicUrl`, else the bound address). */
  urls: ReturnType<typeof canonicalUrls>;
  /** Body limits every endpoint reads per request (a reload swaps them); default: the config's. */
  limits?: BodyLimits;
  /** Refuses new JSON-RPC requests while the gateway drains (lifecycle/drain-gate.ts). */
  refuseRequests?: () => GatewayError | undefined;
  /** Traces and audit lines: each endpoint's requests observed under its audit name. */
  telemetry: Telemetry;
  /** Sessions' own tokens for `perUser` servers, on every endpoint; absent: those servers get none. */
  userTokens?: UserTokens;
  /** Tool integrity, judged in every endpoint's catalogue (integrity/tool-integrity.ts); absent: off. */
  integrity?: ToolIntegrity;
}

export interface Endpoints {
  readonly aggregate: McpEndpoint;
  /** Live: a removed server's side channel leaves it (its path then answers 404). */
  readonly sideChannels: ReadonlyMap<string, McpEndpoint>;
  readonly agents: AgentEndpoints;
  /**
   * A reload adds `name`: its `defer` / `alwaysLoad` apply to every endpoint's tool surface, and
   * its side channel opens. Call once the registry holds its entry and before it joins the
   * roster (`UpstreamRegistry.addServer` says when); the aggregate and agents follow the roster.
   */
  addServer(name: string, config: ServerConfig): void;
  /** Closes the side channel of a server a reload removed (its sessions end) and forgets it. */
  removeServer(name: string): Promise<void>;
  /** 2025 sessions open on every endpoint. */
  sessionCount(): number;
  /** 2026-era listen streams and calls open on every endpoint. */
  open2026(): Open2026;
  close(): Promise<void>;
}

/** What one endpoint adds to the shared options: an agent's name, body and allowlist; the aggregate's persona and entries. */
type EndpointExtras = Partial<Pick<EndpointOptions, 'name' | 'instructions' | 'persona' | 'entries' | 'handshakeMeta' | 'instructionsLead' | 'hiddenWithoutTools'>> & {
  toolFilter?: VisibilityFilter;
  gatewayResources?: GatewayResources;
  /** A side channel's one server: its names are unprefixed (for the audit's hidden-name reason). */
  server?: string;
  /** Servers its 2025 clients may bring (session-servers-scope.ts); only the aggregate takes any. */
  sessionServers: SessionServersOptions;
};

/** The endpoint as audit lines name it: `aggregate`, `server:<name>`, `agent:<name>`. */
function auditName(label: string): string {
  if (label.startsWith('servers/')) return `server:${label.slice('servers/'.length)}`;
  if (label.startsWith('agents/')) return `agent:${label.slice('agents/'.length)}`;
  return label;
}

export function buildEndpoints(deps: EndpointsDeps): Endpoints {
  const { config, registry, logger } = deps;
  const surfaceOptions = compileToolSurfaceOptions(config);
  // One segment cache for every endpoint: an agent endpoint shows the aggregate's names, so their
  // indexes share each server's postings.
  const segments = new SegmentCache();
  // 2026 callers' loaded tools: in Redis when replicas share state, else in this process.
  const loadedNames = deps.sharing.loadedNames?.() ?? memoryLoadedNames();
  const initOptions = { persona: config.policy.agentPersona, eventStoreLimit: config.eventStore.limit };
  const policyAllows = compileDeniedTools(config.policy.deniedTools);
  const judgedBy = (gate: SessionServersOptions['gate']): SessionServersOptions => ({ gate, policyAllows });
  const endpoint = (servers: ServerRoster, separator: string | null, label: string, extras: EndpointExtras) => {
    const { toolFilter: narrowed, gatewayResources, server, sessionServers, ...endpointExtras } = extras;
    const observers = deps.telemetry.observersFor(auditName(label), separator, server);
    const tools = new ToolSurface(surfaceOptions, {
      get servers() {
        return servers.names;
      },
      instructionsOf: (server) => {
        const instructions = registry.entry(server).primary.current?.instructions;
        return deps.integrity === undefined ? instructions : deps.integrity.servedInstructions(server, instructions);
      },
      endpoint: label,
      loadedNames,
    }, segments);
    const scope: ScopeOptions = {
      registry,
      servers,
      catalogue: { separator, toolFilter: narrowed ?? deps.toolFilter, ...(deps.integrity === undefined ? {} : { integrity: deps.integrity }) },
      tools,
      logger,
      inputTtlMs: config.statelessPool.inputTtlMs,
      ...(deps.limiter === undefined ? {} : { limiter: deps.limiter }),
      ...(deps.visibility === undefined ? {} : { visibility: deps.visibility }),
      ...(gatewayResources === undefined ? {} : { gatewayResources }),
      ...(deps.userTokens === undefined ? {} : { userTokens: deps.userTokens }),
      sessionServers,
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
      initOptions,
      ...(observers === undefined ? {} : { observers }),
      ...endpointExtras,
      ...(server === undefined ? {} : { server }),
      ...(deps.refuseRequests === undefined ? {} : { refuseRequests: deps.refuseRequests }),
    });
  };
  const { agents, customizations, urls } = deps;
  // Every server of the registry, the ones a reload adds included (upstream/server-roster.ts).
  const serverNames = registry.roster;
  const dataMode = config.catalogue.dataMode;
  const aggregate = endpoint(serverNames, config.catalogue.separator, 'aggregate', {
    ...(config.persona === undefined ? {} : { persona: config.persona }),
    handshakeMeta: announcedServer(config.name, urls.aggregate),
    ...(deps.gatewayResources === undefined ? {} : { gatewayResources: deps.gatewayResources }),
    sessionServers: judgedBy(compileSessionServersGate(config.policy)),
    entries: {
      dataMode,
      ...(agents.agents.length === 0
        ? {}
        : {
            agentPrompts: () => agentPrompts(agents),
            agentsResource: (access, shown) => JSON.stringify({ items: agentItems(customizationsFor(customizations.snapshot().items, access), agents, shown) }),
            agentOffers: agentOffers(agents),
          }),
    },
  });
  const sideChannel = (name: string) =>
    endpoint(ServerRoster.of([name]), null, `servers/${name}`, {
      server: name,
      handshakeMeta: announcedServer(name, urls.sideChannel(name)),
      entries: { dataMode },
      sessionServers: judgedBy(sideChannelGate),
    });
  const sideChannels = new Map(serverNames.names.map((name) => [name, sideChannel(name)]));
  // An agent endpoint: every server, the aggregate's names, the agent's allowlist on top.
  const agentEndpoints = new AgentEndpoints(agents, (agent) =>
    endpoint(serverNames, config.catalogue.separator, `agents/${agent.declaration.name}`, {
      name: agent.declaration.name,
      instructions: agent.declaration.body,
      instructionsLead: true,
      handshakeMeta: { ...announcedServer(agent.declaration.name, urls.agent(agent.declaration.name)), ...agentMeta(agent) },
      toolFilter: agentToolFilter(deps.toolFilter, agent),
      hiddenWithoutTools: true,
      sessionServers: judgedBy(agentEndpointGate),
    }),
  );
  const all = () => [aggregate, ...sideChannels.values()];
  return {
    aggregate,
    sideChannels,
    agents: agentEndpoints,
    addServer: (name, server) => {
      addServerSurface(surfaceOptions, name, server);
      if (!sideChannels.has(name)) sideChannels.set(name, sideChannel(name));
    },
    removeServer: async (name) => {
      const channel = sideChannels.get(name);
      sideChannels.delete(name);
      await channel?.close();
    },
    sessionCount: () => all().reduce((sum, e) => sum + e.sessionCount, agentEndpoints.sessionCount),
    open2026: () =>
      all().reduce(
        (sum, e) => ({ listens: sum.listens + e.open2026.listens, calls: sum.calls + e.open2026.calls }),
        agentEndpoints.open2026,
      ),
    close: async () => {
      await Promise.all([...all().map((e) => e.close()), agentEndpoints.close()]);
    },
  };
}
