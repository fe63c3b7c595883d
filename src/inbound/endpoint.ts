/**
 * One MCP endpoint (the aggregate `/mcp`, or a per-server side channel): both protocol eras on
 * one path. The body is read once, bounded; the SDK's classifier decides the era from it and the
 * standard headers (request-2026.ts `classifyRequest`); 2025 traffic goes to its session's
 * transport (the endpoint's sessions: `endpoint-sessions.ts`), 2026 traffic to the gateway's own
 * stateless binding (`request-2026.ts`), which answers through the endpoint's method table.
 */
import type { AccessProfile } from '../policy/access-policy.js';
import { errorResponse, protocolRefusalResponse, type GatewayError } from '../errors.js';
import type { GatewayEntries } from '../routing/gateway-entries.js';
import { endpointExtras, endpointInstructions, type EndpointExtrasOptions } from './endpoint-extras.js';
import type { Handshake } from './method-table.js';
import { optionsReader, type OptionsReader } from './init-options-reader.js';
import type { Logger } from '../observability/logger.js';
import { primaryInfo, type ServedInstructions } from '../routing/primaries.js';
import { feedListeners } from '../routing/listens/listen-feed.js';
import { StatelessScope } from '../routing/scopes/stateless-scope.js';
import type { ScopeOptions } from '../routing/scopes/scope-options.js';
import type { RouteScope } from '../routing/router.js';
import type { GatewayEventStore } from '../session/event-store.js';
import type { SessionAdmission } from '../session/session-admission.js';
import { readJsonRpcBody, type BodyLimits } from './body.js';
import { accessView, type AccessView } from '../policy/access-view.js';
import { ANYONE, chargeRequest, refusedRequest, requestIdOf, type Caller } from './entrance.js';
import type { IncomingBody } from './incoming-body.js';
import type { Era } from '../rpc/era.js';
import { endpointIdentity, type EndpointIdentity } from './endpoint-identity.js';
import type { Session2025 } from './session-2025.js';
import { EndpointSessions } from './endpoint-sessions.js';
import { LegacySseEndpoint } from './legacy-sse/sse-endpoint.js';
import type { SessionHooks } from '../session/session-hooks.js';
import { ListenStreams } from './listens-2026.js';
import { classifyRequest, postedResponseRefusal, Requests2026, type Face2026 } from './request-2026.js';
import { createMethodTable } from './method-table.js';
import { ResourceListens } from '../routing/listens/resource-listens.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { RequestObservers } from './request-observers.js';
import { relayTaskStatus } from '../routing/tasks/task-scope.js';
import { TaskTable, type TaskTableOptions } from '../routing/tasks/task-table.js';


/** `EndpointExtrasOptions` (endpoint-extras.ts): persona, init options, the gateway's entries, handshake `_meta`. */
export interface EndpointOptions extends EndpointExtrasOptions {
  /** Counts every request this endpoint answers (observability/metrics.ts); absent: not counted. */
  metrics?: GatewayMetrics;
  /** Traces and audit lines of every request (request-observers.ts); absent: neither. */
  observers?: RequestObservers;
  name: string;
  version: string;
  scope: ScopeOptions;
  /** `max` bounds this endpoint's registry; the gateway-wide caps are the admission's. */
  sessions: { max: number; idleTimeoutMs: number };
  /** The gateway's one session budget and `initialize` rate limit, shared by every endpoint. */
  admission: SessionAdmission;
  limits: BodyLimits;
  logger: Logger;
  /** Keeps 2025-era SSE events for `Last-Event-ID` resumption; absent means no replay. */
  eventStore?: GatewayEventStore;
  /** Close a long call's SSE response after this long (resumable sessions only). */
  pollAfterMs?: number;
  /** A 2025-era call unanswered after this long gets a resumable SSE stream; quicker ones one JSON body. */
  streamAfterMs: number;
  /**
   * How this endpoint's Streamable HTTP sessions are shared beyond this process (session-hooks.ts;
   * a cluster replica's come from src/cluster/). Default: held here alone.
   */
  sessionHooks?: SessionHooks;
  /** Bounds of the tasks this endpoint tracks for its clients (routing/tasks/). */
  tasks?: TaskTableOptions;
  /**
   * Asked for each POSTed JSON-RPC request: an error refuses it (the gateway is draining); its
   * answers and notifications still pass, so a call in flight can get what it waits for.
   */
  refuseRequests?: () => GatewayError | undefined;
  /** A side channel's one server: the endpoint exists only for callers shown that server. */
  server?: string;
  /**
   * An agent endpoint: it does not exist for a caller whose access rules hide every tool it
   * offers (its servers are the ones its allowlist reaches). Absent: it exists for every caller.
   */
  hiddenWithoutTools?: boolean;
  /** Bounds of 2026 listens (listens-2026.ts, routing/listens/resource-listens.ts); absent: their defaults. */
  listens?: { maxListens?: number; maxListensPerPrincipal?: number; maxUrisTotal?: number; maxUrisPerPrincipal?: number };
}

/** What 2026-era clients hold open (the metrics' `portcullis_listen_streams`, `portcullis_calls_in_flight`). */
export interface Open2026 {
  readonly listens: number;
  readonly calls: number;
}

export class McpEndpoint {
  private readonly options: EndpointOptions;
  /** The endpoint's 2025-era sessions. */
  private readonly sessions: EndpointSessions;
  /** The endpoint's 2026-era requests (request-2026.ts). */
  private readonly requests2026: Requests2026;
  private readonly stateless: StatelessScope;
  private readonly unsubscribes: Array<() => void> = [];
  private readonly tasks: TaskTable | undefined;
  /** 2026 clients' resource subscriptions (`subscriptions/listen`), held upstream per listen. */
  private readonly resourceListens: ResourceListens;
  private readonly listens: ListenStreams;
  /** The deprecated HTTP+SSE transport (2024-11-05) on this endpoint's sessions (legacy-sse/). */
  readonly legacySse: LegacySseEndpoint;
  /** Init options of 2026 requests, read per request (ignored names logged once per set). */
  private readonly requestOptions: OptionsReader | undefined;

  constructor(options: EndpointOptions) {
    if (options.tasks !== undefined) {
      // One table per endpoint: a task created here is reachable here only, by its owner only.
      this.tasks = new TaskTable(options.tasks);
      this.tasks.onStatus(relayTaskStatus);
      options = { ...options, scope: { ...options.scope, tasks: this.tasks } };
    }
    this.options = options;
    let sessionOptions: OptionsReader | undefined;
    if (options.initOptions !== undefined) {
      this.requestOptions = optionsReader(options.initOptions, options.logger, false);
      // A 2025 session's, read at its `initialize` (ignored names logged each time).
      sessionOptions = optionsReader(options.initOptions, options.logger, true);
    }
    this.sessions = new EndpointSessions({
      endpoint: options,
      readOptions: sessionOptions,
      identity: (access) => this.identity('2025', accessView(access)),
      extras: (access) => this.extras(accessView(access)),
      sharedCatalogue: (access) => this.stateless.catalogueFor(undefined, access),
    });
    // A full budget first expires idle sessions, on whichever endpoint they are.
    this.unsubscribes.push(options.admission.addReclaimer(() => this.sessions.expireIdle()));
    this.legacySse = new LegacySseEndpoint({
      host: { openSession: (principal, wire, access) => this.sessions.openSse(principal, wire, access) },
      limiter: options.scope.limiter,
      limits: options.limits,
      logger: options.logger,
    });
    const stateless = new StatelessScope(options.scope);
    this.stateless = stateless;
    const listens = options.listens ?? {};
    this.resourceListens = new ResourceListens({
      registry: options.scope.registry,
      servers: options.scope.servers,
      logger: options.logger,
      ...(listens.maxUrisTotal === undefined ? {} : { maxTotal: listens.maxUrisTotal }),
      ...(listens.maxUrisPerPrincipal === undefined ? {} : { maxPerPrincipal: listens.maxUrisPerPrincipal }),
    });
    this.listens = new ListenStreams(this.resourceListens, {
      logger: options.logger,
      ...(listens.maxListens === undefined ? {} : { maxListens: listens.maxListens }),
      ...(listens.maxListensPerPrincipal === undefined ? {} : { maxListensPerPrincipal: listens.maxListensPerPrincipal }),
    });
    this.requests2026 = new Requests2026({
      face: (access) => this.face2026(access),
      scope: (principal, workspace, capabilities, access) => stateless.forPrincipal(principal, workspace, capabilities, access),
      listens: this.listens,
      logger: options.logger,
    });
    // 2026 clients learn of list changes through `subscriptions/listen` (listen-feed.ts says which).
    this.unsubscribes.push(feedListeners(options.scope.registry, options.scope.servers, stateless.catalogue, (list) => this.listens.publish(list)));
    // A global or workspace decision changes what sessionless callers see: every list may have.
    const visibility = options.scope.visibility;
    if (visibility !== undefined) {
      this.unsubscribes.push(
        visibility.onChange(() => {
          for (const list of ['tools', 'prompts', 'resources'] as const) this.listens.publish(list);
        }),
      );
    }
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** What 2026-era clients hold open on this endpoint now: listen streams, and calls not yet answered. */
  get open2026(): Open2026 {
    return { listens: this.listens.streams, calls: this.requests2026.calls };
  }

  /**
   * What a 2026 request of `principal` with `access` (no workspace, no declared capabilities, no
   * `deferTools` option) lists from: this endpoint's catalogue and tool surface as that caller
   * sees them. Lists only; the admin page counts what its own caller is shown through it.
   */
  listingView(principal: string | undefined, access: AccessProfile | undefined): Pick<RouteScope, 'catalogue' | 'tools'> {
    const scope = this.stateless.forPrincipal(principal, undefined, undefined, access);
    return { catalogue: scope.catalogue, tools: scope.tools };
  }

  /**
   * Whether this endpoint exists for a caller with `access`: a side channel whose one server the
   * caller's rules hide answers exactly like one that is not configured (policy/access-view.ts).
   */
  shownTo(access: AccessProfile | undefined): boolean {
    const server = this.options.server;
    return server === undefined || accessView(access).showsServer(server);
  }

  /**
   * {@link shownTo}, and for an agent endpoint (`hiddenWithoutTools`) whether the caller's rules
   * leave it any of the tools the agent offers: one whose every tool they hide answers exactly
   * like an unknown agent. Judged from the lists (cached per access profile); while the agent
   * offers nobody anything (its servers down), nothing is hidden by answering, so it exists.
   */
  async existsFor({ principal, access }: Caller): Promise<boolean> {
    if (!this.shownTo(access)) return false;
    if (this.options.hiddenWithoutTools !== true || accessView(access).seesAll) return true;
    try {
      const offered = await this.listingView(principal, undefined).catalogue.tools();
      if (offered.tools.length === 0) return true;
      return (await this.listingView(principal, access).catalogue.tools()).tools.length > 0;
    } catch {
      return true;
    }
  }

  /**
   * Serves one HTTP request of `caller` (entrance.ts): a 2025 session belongs to the principal
   * that opened it, and a 2026 request's pooled connections count against its principal.
   * `incoming`, the Node request under @hono/node-server, is where a POST body is read from when
   * given (`request` then needs no body: nothing below reads it again, every handler gets
   * `parsedBody`). A POSTed request spends the caller's `requests` budget here, once, before
   * anything dispatches it.
   */
  async fetch(request: Request, caller: Caller = ANYONE, incoming?: IncomingBody): Promise<Response> {
    const { principal, access } = caller;
    let parsedBody: unknown;
    if (request.method === 'POST') {
      const body = await readJsonRpcBody(request, this.options.limits, incoming);
      if (!body.ok) return errorResponse(body.error);
      parsedBody = body.value;
      const id = requestIdOf(parsedBody);
      const refused = id === undefined ? undefined : this.options.refuseRequests?.();
      if (refused !== undefined) return errorResponse(refused, id === undefined ? {} : { id });
      const spent = await chargeRequest(this.options.scope.limiter, caller, parsedBody);
      if (spent !== undefined) return refusedRequest(spent, parsedBody);
    }
    // A request naming a session this replica holds is 2025-era by construction (2026 has no
    // sessions): skip the classifier, which costs on every call of a busy session. GET and
    // DELETE are session operations (2026-07-28 is POST only).
    const sessionId = request.headers.get('mcp-session-id');
    const known = sessionId !== null && this.sessions.holds(sessionId);
    if (!known && request.method === 'POST') {
      const outcome = classifyRequest(request, parsedBody);
      if (outcome.kind !== 'legacy') return this.requests2026.serve(request, parsedBody, outcome, { principal, access }, incoming);
      const response = postedResponseRefusal(outcome, request.headers);
      if (response !== undefined) return protocolRefusalResponse(response, null);
    }
    return this.sessions.serve(request, parsedBody, principal, access);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await this.sessions.closeAll();
    this.listens.close();
    this.requests2026.close();
    this.resourceListens.close();
    await this.stateless.close();
    this.tasks?.close();
  }

  /**
   * The servers the client of session `sessionId` brought, for that session's customisation
   * list; undefined for an unknown session, one held by another principal, or one that brought none.
   */
  broughtBy(sessionId: string, principal: string | undefined): ReturnType<Session2025['broughtServers']> {
    return this.sessions.broughtBy(sessionId, principal);
  }

  /**
   * How a 2026 request of a caller with `access` is served: the method table with the identity
   * and extras of the caller's view (built per request: capabilities follow the primaries that are
   * up right now), the capabilities declared, and the gateway's `serverInfo`.
   */
  private face2026(access: AccessProfile | undefined): Face2026 {
    const options = this.options;
    const view = accessView(access);
    const identity = this.identity('2026', view);
    const table = createMethodTable({
      ...identity,
      era: '2026',
      logger: options.logger,
      metrics: options.metrics,
      observers: options.observers,
      ...this.extras(view),
      options: this.requestOptions === undefined ? undefined : { perRequest: this.requestOptions },
    });
    return { table, capabilities: identity.capabilities, serverInfo: { name: identity.name, version: identity.version } };
  }

  /** The handshake completion and the gateway's own entries, for every `Server` of this endpoint, as `view` sees them. */
  private extras(view: AccessView): { handshake?: Handshake; entries?: GatewayEntries } {
    return endpointExtras(this.options, () => view.shownServers(primaryInfo(this.options.scope.registry, this.options.scope.servers.names, this.servedInstructions())));
  }

  /** Under tool integrity, a server's pinned instructions while a change of them is held. */
  private servedInstructions(): ServedInstructions | undefined {
    const integrity = this.options.scope.catalogue.integrity;
    return integrity === undefined ? undefined : (server, current) => integrity.servedInstructions(server, current);
  }

  /**
   * Name, capabilities and instructions for a client of `era` whose access view is `view`, from
   * the primaries that are up right now (endpoint-identity.ts).
   */
  private identity(era: Era, view: AccessView): EndpointIdentity {
    const { scope, name, version, instructions, entries } = this.options;
    return endpointIdentity(
      {
        registry: scope.registry,
        servers: scope.servers,
        served: this.servedInstructions(),
        name,
        version,
        instructions,
        tasks: this.tasks !== undefined,
        gatewayResources: scope.gatewayResources !== undefined,
        instructionsFor: (parts) => endpointInstructions(this.options, parts),
        ownEntries: { prompts: entries?.agentPrompts !== undefined, resources: entries?.agentsResource !== undefined },
      },
      era,
      view,
    );
  }
}
