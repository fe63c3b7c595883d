/**
 * One MCP endpoint (the aggregate `/mcp`, or a per-server side channel): both protocol eras on
 * one path. The body is read once, bounded; `isLegacyRequest` decides the era; 2025 traffic goes
 * to its session's transport, 2026 traffic to the SDK's stateless `createMcpHandler` with
 * `legacy: 'reject'` (its own legacy mode has no sessions: docs/decisions.md, "Behaviours the code
 * is built around").
 */
import { createMcpHandler, isLegacyRequest, type AuthInfo, type McpHttpHandler, type ServerCapabilities } from '@modelcontextprotocol/server';
import { errorResponse, refusal } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { mergeCapabilities, mergeInstructions } from '../catalogue/merge.js';
import { feedListeners } from '../routing/listen-feed.js';
import { primaryInfo } from '../routing/primaries.js';
import { StatelessScope, type ScopeOptions } from '../routing/scopes.js';
import { workspaceError, workspaceOf } from '../routing/workspace.js';
import type { GatewayEventStore } from '../session/event-store.js';
import type { SessionAdmission, SessionTicket } from '../session/session-admission.js';
import { SessionRegistry } from '../session/session-registry.js';
import { readJsonRpcBody, type BodyLimits } from './body.js';
import type { IncomingBody } from './incoming-body.js';
import { createGatewayServer } from './gateway-server.js';
import { LegacySession, type LegacySessionOptions } from './legacy-session.js';
import { LegacySseEndpoint } from './legacy-sse/sse-endpoint.js';
import { modernServerCapabilities } from './modern-capabilities.js';
import type { EndpointCluster } from '../cluster/cluster.js';
import { sessionTag } from '../observability/session-tag.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { mergeTaskCapability, TASKS_EXTENSION } from '../routing/tasks/task-capabilities.js';
import { relayTaskStatus } from '../routing/tasks/task-scope.js';
import { TaskTable, type TaskTableOptions } from '../routing/tasks/task-table.js';

const metricsOption = (metrics: GatewayMetrics | undefined) => (metrics === undefined ? {} : { metrics });

export interface EndpointOptions {
  /** Counts every request this endpoint answers (observability/metrics.ts); absent: not counted. */
  metrics?: GatewayMetrics;
  name: string;
  version: string;
  /** The gateway's own instructions (persona text), placed before each upstream's. */
  instructions: string | undefined;
  scope: ScopeOptions;
  /** `max` bounds this endpoint's registry; the gateway-wide caps are the admission's. */
  sessions: { max: number; idleTimeoutMs: number; childIdleTimeoutMs: number };
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
  /** Replica of a cluster (src/cluster): sessions held elsewhere are forwarded or taken over. */
  cluster?: EndpointCluster;
  /** Bounds of the tasks this endpoint tracks for its clients (routing/tasks/). */
  tasks?: TaskTableOptions;
}

/**
 * How a 2026-era request's principal reaches the scope it routes through: the SDK hands the
 * `authInfo` given to `fetch` to the factory that builds the request's `Server`. The credential
 * itself stops at the edge (app.ts strips it), so `token` is empty; `clientId` is the principal.
 */
function principalAuthInfo(principal: string): AuthInfo {
  return { token: '', clientId: principal, scopes: [] };
}

export class McpEndpoint {
  private readonly options: EndpointOptions;
  private readonly sessions: SessionRegistry<LegacySession>;
  private readonly modern: McpHttpHandler;
  private readonly stateless: StatelessScope;
  private readonly unsubscribes: Array<() => void> = [];
  /** The workspace each 2026 request named, for the factory that builds its `Server` (keyed by the request itself). */
  private readonly workspaces = new WeakMap<Request, string>();
  private readonly tasks: TaskTable | undefined;
  /** The deprecated HTTP+SSE transport (2024-11-05) on this endpoint's sessions (legacy-sse/). */
  readonly legacySse: LegacySseEndpoint;

  constructor(options: EndpointOptions) {
    if (options.tasks !== undefined) {
      // One table per endpoint: a task created here is reachable here only, by its owner only.
      this.tasks = new TaskTable(options.tasks);
      this.tasks.onStatus(relayTaskStatus);
      options = { ...options, scope: { ...options.scope, tasks: this.tasks } };
    }
    this.options = options;
    this.sessions = new SessionRegistry<LegacySession>({
      ...options.sessions,
      onClosed: (id, reason) => options.logger.info({ session: sessionTag(id), reason }, 'session closed'),
    });
    // A full budget first expires idle sessions, on whichever endpoint they are.
    this.unsubscribes.push(options.admission.addReclaimer(() => this.sessions.expireIdle()));
    this.legacySse = new LegacySseEndpoint({
      host: { openSession: (principal, wire) => this.openSseSession(principal, wire) },
      limits: options.limits,
      logger: options.logger,
    });
    const stateless = new StatelessScope(options.scope);
    this.stateless = stateless;
    this.modern = createMcpHandler(
      // Built per request: the request's principal arrives in `authInfo` (see `fetch`).
      (context) => {
        const workspace = context.requestInfo === undefined ? undefined : this.workspaces.get(context.requestInfo);
        const scope = stateless.forPrincipal(context.authInfo?.clientId, workspace);
        const identity = this.identity('modern');
        const capabilities = modernServerCapabilities(identity.capabilities);
        return createGatewayServer({ ...identity, capabilities, era: 'modern', logger: options.logger, ...metricsOption(options.metrics) }, () => scope);
      },
      { legacy: 'reject', onerror: (error) => options.logger.debug({ err: error.message }, 'modern request rejected') },
    );
    // 2026 clients learn of list changes through `subscriptions/listen` (listen-feed.ts says which).
    this.unsubscribes.push(
      feedListeners(options.scope.registry, options.scope.servers, stateless.catalogue, (list) => {
        if (list === 'tools') this.modern.notify.toolsChanged();
        else if (list === 'prompts') this.modern.notify.promptsChanged();
        else this.modern.notify.resourcesChanged();
      }),
    );
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * Serves one HTTP request. `principal` is who authentication says is calling (undefined when
   * auth is off); a 2025 session belongs to the principal that opened it, and a 2026 request's
   * pooled connections count against its principal. `incoming`, the Node request under
   * @hono/node-server, is where a POST body is read from when given (`request` then needs no
   * body: nothing below reads it again, every handler gets `parsedBody`).
   */
  async fetch(request: Request, principal?: string, incoming?: IncomingBody): Promise<Response> {
    let parsedBody: unknown;
    if (request.method === 'POST') {
      const body = await readJsonRpcBody(request, this.options.limits, incoming);
      if (!body.ok) return errorResponse(body.error);
      parsedBody = body.value;
    }
    // A request naming a session this replica holds is 2025-era by construction (2026 has no
    // sessions): skip the classifier, which costs on every call of a busy session.
    const sessionId = request.headers.get('mcp-session-id');
    const known = sessionId !== null && this.sessions.get(sessionId) !== undefined;
    if (!known && !(await isLegacyRequest(request, parsedBody))) {
      const workspace = workspaceOf(parsedBody);
      if (!workspace.ok) return errorResponse(workspaceError(workspace.message));
      if (workspace.workspace !== undefined) this.workspaces.set(request, workspace.workspace);
      return this.modern.fetch(request, {
        ...(parsedBody === undefined ? {} : { parsedBody }),
        ...(principal === undefined ? {} : { authInfo: principalAuthInfo(principal) }),
      });
    }
    return this.legacy(request, parsedBody, principal);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await this.sessions.closeAll();
    await this.modern.close();
    this.tasks?.close();
  }

  private async legacy(request: Request, parsedBody: unknown, principal: string | undefined): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    const { cluster } = this.options;
    const forged = cluster?.refuseForged(request); // cluster
    if (forged !== undefined) return forged;
    if (sessionId !== null) {
      let session: LegacySession | Response | undefined = this.sessions.get(sessionId);
      // A session not held here may live on another replica, or need taking over (src/cluster/).
      if (session === undefined && cluster !== undefined) {
        session = await cluster.route({
          request,
          sessionId,
          principal,
          parsedBody,
          open: async (owner, id) => {
            const admitted = this.options.admission.admitAdopted(owner);
            if (!admitted.ok) throw admitted.error;
            const adopted = this.newSession(owner, admitted.ticket, id);
            try {
              await adopted.start();
            } catch (error) {
              await adopted.close();
              throw error;
            }
            return adopted;
          },
          drop: (id) => this.sessions.delete(id),
        });
        if (session instanceof Response) return session;
      }
      // Another principal presenting a session id learns nothing: exactly like an unknown id.
      if (session === undefined || session.principal !== principal) {
        return refusal('SESSION_NOT_FOUND', 'Session not found');
      }
      return session.handle(request, parsedBody);
    }
    if (request.method !== 'POST' || (parsedBody as { method?: unknown }).method !== 'initialize') {
      return refusal('SESSION_ID_REQUIRED', 'Bad Request: Mcp-Session-Id header is required');
    }
    const workspace = workspaceOf(parsedBody);
    if (!workspace.ok) return errorResponse(workspaceError(workspace.message));
    const admitted = this.options.admission.admitInitialize(principal);
    if (!admitted.ok) return errorResponse(admitted.error);
    const session = this.newSession(principal, admitted.ticket, undefined, undefined, workspace.workspace);
    try {
      await session.start();
      const response = await session.handle(request, parsedBody);
      if (!session.initialised) await session.close();
      // cluster: recorded before the client learns the id, so any replica can find it next.
      else await cluster?.opened(session.id, principal, parsedBody, () => this.sessions.delete(session.id));
      return response;
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  /**
   * An HTTP+SSE session: its stream opens it, before any `initialize`, so it is admitted (rate,
   * caps) and registered from the start. No event store (nothing on that wire resumes), and not
   * shared with other replicas (its stream is held here). Rejects with the admission's
   * `GatewayError` when refused.
   */
  private async openSseSession(principal: string | undefined, wire: LegacySessionOptions['wire']): Promise<LegacySession> {
    const admitted = this.options.admission.admitInitialize(principal);
    if (!admitted.ok) throw admitted.error;
    const session = this.newSession(principal, admitted.ticket, undefined, wire);
    try {
      await session.start();
    } catch (error) {
      await session.close();
      throw error;
    }
    this.sessions.add(session);
    return session;
  }

  /**
   * A session of this endpoint, not yet started; `sessionId` only for one taken over (cluster),
   * `wire` for one on another transport than Streamable HTTP.
   */
  private newSession(
    principal: string | undefined,
    ticket: SessionTicket,
    sessionId?: string,
    wire?: LegacySessionOptions['wire'],
    workspace?: string,
  ): LegacySession {
    const cluster = wire === undefined ? this.options.cluster : undefined;
    return new LegacySession({
      ...this.identity('legacy'),
      principal,
      ...(workspace === undefined ? {} : { workspace }),
      scope: this.options.scope,
      sharedCatalogue: this.stateless.catalogue,
      ticket,
      childIdleTimeoutMs: this.options.sessions.childIdleTimeoutMs,
      logger: this.options.logger,
      eventStore: wire === undefined ? this.options.eventStore : undefined,
      pollAfterMs: this.options.pollAfterMs,
      streamAfterMs: this.options.streamAfterMs,
      ...metricsOption(this.options.metrics),
      onInitialized: (s) => {
        this.sessions.add(s);
        this.options.logger.info({ session: sessionTag(s.id) }, 'session opened');
      },
      onClosed: (id) => this.sessions.delete(id),
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(wire === undefined ? {} : { wire }),
      ...(cluster === undefined ? {} : { tapResponse: (id, body, response) => cluster.tap(id, body, response) }),
    });
  }

  /**
   * The servers the client of session `sessionId` brought, for that session's customisation
   * list; undefined for an unknown session, one held by another principal, or one that brought none.
   */
  broughtBy(sessionId: string, principal: string | undefined): ReturnType<LegacySession['broughtServers']> {
    const session = this.sessions.get(sessionId);
    return session === undefined || session.principal !== principal ? undefined : session.broughtServers();
  }

  /** Name, capabilities and instructions for a client of `era`, from the primaries that are up right now. */
  private identity(era: 'legacy' | 'modern'): { name: string; version: string; capabilities: ServerCapabilities; instructions: string | undefined } {
    const parts = primaryInfo(this.options.scope.registry, this.options.scope.servers);
    const capabilities = mergeCapabilities(parts);
    // The gateway relays logging and list changes itself, whatever each upstream declared.
    capabilities.logging = {};
    for (const key of ['tools', 'prompts', 'resources'] as const) {
      if (capabilities[key] !== undefined) capabilities[key] = { ...capabilities[key], listChanged: true };
    }
    // Tasks: the 2025 capability or the 2026 extension, when some upstream takes tool tasks.
    const tasks = this.tasks === undefined ? undefined : mergeTaskCapability(parts);
    if (tasks !== undefined && era === 'legacy') capabilities.tasks = tasks;
    if (tasks !== undefined && era === 'modern') capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
    const instructions =
      this.options.scope.servers.length === 1
        ? parts[0]?.instructions ?? this.options.instructions
        : mergeInstructions(this.options.instructions, parts);
    return { name: this.options.name, version: this.options.version, capabilities, instructions };
  }
}
