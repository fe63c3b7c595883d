/**
 * The 2025-era sessions of one MCP endpoint (`endpoint.ts`), each a `Session2025`
 * (session-2025.ts) in the endpoint's bounded registry. A request without a session id may only
 * be an `initialize` POST, which opens a session if the gateway's admission lets it (budget, rate);
 * a request naming a session reaches it only for the principal that opened it (another principal
 * learns nothing: exactly like an unknown id); a session this process does not hold is asked of the
 * session hooks (session-hooks.ts: a cluster replica adopts it or forwards the request). An
 * HTTP+SSE session (legacy-sse/) is admitted and registered when its stream opens.
 */
import type { AccessProfile } from '../policy/access-policy.js';
import { errorResponse, refusal } from '../errors.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { GatewayEntries } from '../routing/gateway-entries.js';
import { workspaceError, workspaceOf } from '../routing/workspace.js';
import type { SessionTicket } from '../session/session-admission.js';
import { SessionRegistry } from '../session/session-registry.js';
import { LOCAL_HOOKS, type SessionHooks } from '../session/session-hooks.js';
import { sessionTag } from '../observability/session-tag.js';
import type { EndpointOptions } from './endpoint.js';
import type { EndpointIdentity } from './endpoint-identity.js';
import type { Handshake } from './method-table.js';
import type { OptionsReader } from './init-options-reader.js';
import { Session2025, type Session2025Options } from './session-2025.js';

/** What of the endpoint its sessions are built from. */
export interface EndpointSessionsOptions {
  endpoint: Pick<
    EndpointOptions,
    'scope' | 'sessions' | 'admission' | 'logger' | 'eventStore' | 'pollAfterMs' | 'streamAfterMs' | 'metrics' | 'observers' | 'sessionHooks'
  >;
  /** Init options of a 2025 session, read at its `initialize`; absent: `deferTools` only. */
  readOptions: OptionsReader | undefined;
  /** Name, capabilities and instructions for a 2025 client with `access`, from the primaries up right now. */
  identity(access: AccessProfile | undefined): EndpointIdentity;
  /** The handshake completion and the gateway's own entries, as a client with `access` sees them. */
  extras(access: AccessProfile | undefined): { handshake?: Handshake; entries?: GatewayEntries };
  /** The endpoint's catalogue over the primaries, for a session with no connection of its own. */
  sharedCatalogue(access: AccessProfile | undefined): Catalogue;
}

/** What tells one session of an endpoint from another: `sessionId` only for one adopted, `wire` for one on HTTP+SSE. */
interface NewSession {
  principal: string | undefined;
  ticket: SessionTicket;
  sessionId?: string | undefined;
  wire?: Session2025Options['wire'] | undefined;
  workspace?: string | undefined;
  access?: AccessProfile | undefined;
}

/** `session` once started; closed (its children reaped) when it could not start. */
async function started(session: Session2025): Promise<Session2025> {
  try {
    await session.start();
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}

export class EndpointSessions {
  private readonly options: EndpointSessionsOptions;
  private readonly hooks: SessionHooks;
  private readonly sessions: SessionRegistry<Session2025>;

  constructor(options: EndpointSessionsOptions) {
    this.options = options;
    const { endpoint } = options;
    this.hooks = endpoint.sessionHooks ?? LOCAL_HOOKS;
    this.sessions = new SessionRegistry<Session2025>({
      ...endpoint.sessions,
      onClosed: (id, reason) => endpoint.logger.info({ session: sessionTag(id), reason }, 'session closed'),
    });
  }

  get size(): number {
    return this.sessions.size;
  }

  /** True when this process holds session `sessionId`. */
  holds(sessionId: string): boolean {
    return this.sessions.get(sessionId) !== undefined;
  }

  /** Expires idle sessions (the gateway's session budget is full). */
  expireIdle(): ReturnType<SessionRegistry<Session2025>['expireIdle']> {
    return this.sessions.expireIdle();
  }

  /** Serves one 2025-era request of the endpoint. */
  async serve(request: Request, parsedBody: unknown, principal: string | undefined, access: AccessProfile | undefined): Promise<Response> {
    const refused = this.hooks.refuse(request);
    if (refused !== undefined) return refused;
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId === null) return this.initialize(request, parsedBody, principal, access);
    const session =
      this.sessions.get(sessionId) ??
      (await this.hooks.unknown({
        request,
        sessionId,
        principal,
        access: access?.key,
        parsedBody,
        adopt: (owner, id) => this.adopt(owner, id, access),
        drop: (id) => this.sessions.delete(id),
      }));
    if (session instanceof Response) return session;
    // Another principal presenting a session id learns nothing: exactly like an unknown id.
    if (session === undefined || session.principal !== principal) return refusal('SESSION_NOT_FOUND', 'Session not found');
    return session.handle(request, parsedBody, access);
  }

  /**
   * An HTTP+SSE session: its stream opens it, before any `initialize`, so it is admitted (rate,
   * caps) and registered from the start. No event store (nothing on that wire resumes), and not
   * shared with other replicas (its stream is held here). Rejects with the admission's
   * `GatewayError` when refused.
   */
  async openSse(principal: string | undefined, wire: Session2025Options['wire'], access: AccessProfile | undefined): Promise<Session2025> {
    const admitted = await this.options.endpoint.admission.admitInitialize(principal);
    if (!admitted.ok) throw admitted.error;
    const session = await started(this.newSession({ principal, ticket: admitted.ticket, wire, access }));
    this.sessions.add(session);
    return session;
  }

  /**
   * The servers the client of session `sessionId` brought, for that session's customisation
   * list; undefined for an unknown session, one held by another principal, or one that brought none.
   */
  broughtBy(sessionId: string, principal: string | undefined): ReturnType<Session2025['broughtServers']> {
    const session = this.sessions.get(sessionId);
    return session === undefined || session.principal !== principal ? undefined : session.broughtServers();
  }

  closeAll(): Promise<void> {
    return this.sessions.closeAll();
  }

  /** A request without a session id: only an `initialize` POST, which opens a session if admitted. */
  private async initialize(request: Request, parsedBody: unknown, principal: string | undefined, access: AccessProfile | undefined): Promise<Response> {
    if (request.method !== 'POST' || (parsedBody as { method?: unknown }).method !== 'initialize') {
      return refusal('SESSION_ID_REQUIRED', 'Bad Request: Mcp-Session-Id header is required');
    }
    const workspace = workspaceOf(parsedBody);
    if (!workspace.ok) return errorResponse(workspaceError(workspace.message));
    const admitted = await this.options.endpoint.admission.admitInitialize(principal);
    if (!admitted.ok) return errorResponse(admitted.error);
    const session = this.newSession({ principal, ticket: admitted.ticket, workspace: workspace.workspace, access });
    try {
      await session.start();
      const response = await session.handle(request, parsedBody, access);
      if (!session.initialised) await session.close();
      // Before the client learns the id, so whatever shares sessions can find it next.
      else await this.hooks.opened(session, parsedBody, () => this.sessions.delete(session.id));
      return response;
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  /** A session held elsewhere until now, rebuilt here under its own id (session-hooks.ts, `adopt`). */
  private async adopt(principal: string | undefined, sessionId: string, access: AccessProfile | undefined): Promise<Session2025> {
    const admitted = this.options.endpoint.admission.admitAdopted(principal);
    if (!admitted.ok) throw admitted.error;
    return started(this.newSession({ principal, ticket: admitted.ticket, sessionId, access }));
  }

  /**
   * A session of this endpoint, not yet started; `sessionId` only for one adopted, `wire` for one
   * on another transport than Streamable HTTP (not shared: its stream is held here, no event store).
   */
  private newSession({ principal, ticket, sessionId, wire, workspace, access }: NewSession): Session2025 {
    const { endpoint, readOptions } = this.options;
    return new Session2025({
      // The handshake is the opening token's view, as the session's lists are (session-2025.ts).
      ...this.options.identity(access),
      principal,
      ...(workspace === undefined ? {} : { workspace }),
      scope: endpoint.scope,
      sharedCatalogue: (profile) => this.options.sharedCatalogue(profile),
      ...(access === undefined ? {} : { access }),
      ticket,
      logger: endpoint.logger,
      eventStore: wire === undefined ? endpoint.eventStore : undefined,
      pollAfterMs: endpoint.pollAfterMs,
      streamAfterMs: endpoint.streamAfterMs,
      ...(endpoint.metrics === undefined ? {} : { metrics: endpoint.metrics }),
      ...(endpoint.observers === undefined ? {} : { observers: endpoint.observers }),
      ...this.options.extras(access),
      ...(readOptions === undefined ? {} : { readOptions }),
      onInitialized: (s) => {
        this.sessions.add(s);
        endpoint.logger.info({ session: sessionTag(s.id) }, 'session opened');
      },
      onClosed: (id) => this.sessions.delete(id),
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(wire === undefined ? { sessionHooks: this.hooks } : { wire }),
    });
  }
}
