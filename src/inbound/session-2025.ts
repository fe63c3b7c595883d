/**
 * One 2025-era client session: its wire transport (Streamable HTTP by default: SSE streams,
 * `Mcp-Session-Id`; or the 2024-11-05 HTTP+SSE transport, see legacy-sse/), the gateway's
 * JSON-RPC peer on it (client-peer.ts, answering through the method table), and the session's
 * upstream connections. Closing it closes all three, so a DELETE, an idle
 * expiry, a closed HTTP+SSE stream or shutdown reaps every child it spawned. What its
 * `initialize` settles (init options, servers the client brings) is `initialize-2025.ts`.
 */
import type { AccessProfile } from '../policy/access-policy.js';
import { randomUUID } from 'node:crypto';
import type { ServerCapabilities, Transport } from '@modelcontextprotocol/server';
import type { GatewayEntries } from '../routing/gateway-entries.js';
import type { InitOptions } from '../rpc/init-options.js';
import type { Handshake } from './method-table.js';
import type { OptionsReader } from './init-options-reader.js';
import type { RouteScope } from '../routing/router.js';
import type { SessionServersScope } from '../routing/scopes/session-servers-scope.js';
import type { Logger } from '../observability/logger.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { SessionScope } from '../routing/scopes/scopes.js';
import type { ScopeOptions, SessionServersOptions } from '../routing/scopes/scope-options.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import type { SessionTicket } from '../session/session-admission.js';
import { LOCAL_HOOKS, type SessionHooks } from '../session/session-hooks.js';
import { ClientPeer } from './client-peer.js';
import { createMethodTable } from './method-table.js';
import { refusedResume } from './resume.js';
import { SessionHttpTransport } from './session-transport.js';
import { requestIdOf, type RequestId } from '../session/jsonrpc-id.js';
import { DEFAULT_SESSION_SERVERS, settleInitialize } from './initialize-2025.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { RequestObservers } from './request-observers.js';

/**
 * What a session needs of the transport its client speaks (`SessionHttpTransport` is one). The
 * wire owns the session's request bookkeeping (request-ledger.ts): it admits each request's id,
 * refusing one already in flight, and frees it when the response is sent or the client cancels.
 */
export interface SessionWire extends Transport {
  /** Serves one HTTP request of the session (after the session's own checks). */
  handleRequest(request: Request, parsedBody?: unknown): Promise<Response>;
  /** SSE responses open right now (a session with one is not idle). */
  readonly openStreams: number;
}

/** What the session gives its wire: the id, and the two moments the session must hear of. */
export interface SessionWireHooks {
  sessionId: string;
  onSessionInitialized(sessionId: string): void | Promise<void>;
  onSessionClosed(sessionId: string): void | Promise<void>;
}

export interface Session2025Options {
  /** The authenticated principal that opened the session (undefined when auth is off). */
  principal: string | undefined;
  /** The workspace the session's `initialize` named (`_meta["portcullis/workspace"]`), if any. */
  workspace?: string;
  name: string;
  version: string;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  scope: ScopeOptions;
  /** The endpoint's catalogue over the primaries as a profile sees it, for a session with no connection of its own. */
  sharedCatalogue?: (access: AccessProfile | undefined) => Catalogue;
  /**
   * What the policy's access rules let the token that opened the session see. Each later request
   * is judged by its own token's profile (`handle`), never by this one.
   */
  access?: AccessProfile;
  /** The session's place in the gateway's session budget, given back when it closes. */
  ticket: SessionTicket;
  logger: Logger;
  /** Where the session's SSE events are kept for `Last-Event-ID` resumption; absent means no replay. */
  eventStore?: GatewayEventStore;
  /** Close a long call's SSE response after this long (needs the event store). */
  pollAfterMs?: number;
  /** Counts each request of the session (observability/metrics.ts); absent: not counted. */
  metrics?: GatewayMetrics;
  /** Traces and audit lines of each request of the session (request-observers.ts). */
  observers?: RequestObservers;
  /** A call unanswered after this long is answered as a resumable SSE stream; 0: every call streams. */
  streamAfterMs: number;
  /** Reads and bounds the init options of the session's `initialize`; absent: `deferTools` only. */
  readOptions?: OptionsReader;
  /** Completes the `initialize` result for this client (method-table.ts). */
  handshake?: Handshake;
  /** The gateway's own prompts, resources and data tools. */
  entries?: GatewayEntries;
  onInitialized(session: Session2025): void;
  onClosed(id: string): void;
  /** Builds the transport the client speaks; default: Streamable HTTP (`SessionHttpTransport`). */
  wire?(hooks: SessionWireHooks): SessionWire;
  /** The id to serve under (a session adopted from elsewhere keeps its id); default: random. */
  sessionId?: string;
  /** How the session is shared beyond this process (session-hooks.ts); default: held here alone. */
  sessionHooks?: SessionHooks;
}

/** SSE `retry:` (ms) in priming events when resumable: how soon a cut client reconnects. */
const RETRY_INTERVAL_MS = 1_000;

export class Session2025 {
  readonly principal: string | undefined;
  /** POSTs and GETs not answered yet; open SSE streams are counted by the transport. */
  private openExchanges = 0;
  private lastActivity = Date.now();
  /** The session id, random unless given; the key the registry holds the session under. */
  readonly id: string;
  readonly transport: SessionWire;
  private readonly scope: SessionScope;
  /** The gateway's JSON-RPC peer toward the client, on the session's wire (client-peer.ts). */
  private readonly peer: ClientPeer;
  private closing: Promise<void> | undefined;
  private sessionId: string | undefined;
  private readonly events: SessionEventStore | undefined;
  private readonly hooks: SessionHooks;
  private readonly ticket: SessionTicket;
  private askedForRoots = false;
  private readonly sessionServers: SessionServersOptions;
  /** What requests route through: the session's scope, joined with the servers its client brought, if any. */
  private routing: SessionServersScope | undefined;
  private brought: SessionServersScope | undefined;
  private readonly options: Session2025Options;
  private readonly readOptions: OptionsReader | undefined;
  /** The init options of this session's `initialize` (none until then). */
  private initOptions: InitOptions = {};
  /** The access profile each request of the session came with, for its handler to route by. */
  private readonly requestAccess = new WeakMap<Request, AccessProfile | undefined>();

  constructor(options: Session2025Options) {
    this.options = options;
    this.sessionServers = options.scope.sessionServers ?? DEFAULT_SESSION_SERVERS;
    this.principal = options.principal;
    this.hooks = options.sessionHooks ?? LOCAL_HOOKS;
    this.ticket = options.ticket;
    this.readOptions = options.readOptions;
    // The id exists before `initialize` so the session's event history can be keyed by it.
    const id = options.sessionId ?? randomUUID();
    this.id = id;
    this.events = options.eventStore?.forSession(id);
    const table = createMethodTable({
      era: '2025',
      name: options.name,
      version: options.version,
      capabilities: options.capabilities,
      instructions: options.instructions,
      logger: options.logger,
      pollAfterMs: options.pollAfterMs,
      metrics: options.metrics,
      observers: options.observers,
      handshake: options.handshake,
      entries: options.entries,
      options: { session: () => this.initOptions },
    });
    const hooks: SessionWireHooks = {
      sessionId: id,
      onSessionInitialized: (id) => {
        this.sessionId = id;
        options.onInitialized(this);
      },
      onSessionClosed: (id) => options.onClosed(id),
    };
    this.transport =
      options.wire?.(hooks) ??
      new SessionHttpTransport({
        ...hooks,
        ...(this.events === undefined ? {} : { eventStore: this.events, retryIntervalMs: RETRY_INTERVAL_MS }),
        streamAfterMs: options.streamAfterMs,
      });
    this.peer = new ClientPeer({
      wire: this.transport,
      table,
      capabilities: options.capabilities,
      scopeOf: (request?: Request) => this.routeFor(request),
      principal: options.principal,
    });
    this.scope = new SessionScope(options.scope, {
      key: { principal: options.principal, workspace: options.workspace },
      owner: this.peer.sessionSink,
      clientCapabilities: () => this.peer.clientCapabilities,
      ...(options.sharedCatalogue === undefined ? {} : { shared: options.sharedCatalogue }),
      ...(options.access === undefined ? {} : { access: options.access }),
      sessionId: id,
    });
  }

  /**
   * Where one request routes: the session's scope (joined with the servers its client brought)
   * as that request's profile sees it; a message with no request of its own (none here) by the
   * session's current profile.
   */
  private routeFor(request: Request | undefined): RouteScope {
    const routing = this.routing ?? this.scope;
    const access = request !== undefined && this.requestAccess.has(request) ? this.requestAccess.get(request) : this.scope.access;
    return routing.forRequest(access);
  }

  /** When the session became idle, or undefined while it has an exchange open. */
  idleSince(): number | undefined {
    return this.openExchanges > 0 || this.transport.openStreams > 0 ? undefined : this.lastActivity;
  }

  /** The servers this session's client brought, with their state; undefined when it brought none. */
  broughtServers(): ReturnType<SessionServersScope['brought']> | undefined {
    return this.brought?.brought();
  }

  get initialised(): boolean {
    return this.sessionId !== undefined;
  }

  async start(): Promise<void> {
    await this.peer.start();
  }

  /**
   * Serves one HTTP request of this session (the endpoint found it by id and checked its
   * principal); the wire admits or refuses its request id. `access` is the profile of the
   * request's own token: the request's lists and calls are judged by it, and it becomes the
   * session's current profile (a change is announced as `list_changed`: scopes.ts `noteAccess`).
   * Without one (a request the gateway makes itself: an adopted session's replayed `initialize`),
   * the session's current profile.
   */
  async handle(request: Request, parsedBody?: unknown, access: AccessProfile | undefined = this.scope.access): Promise<Response> {
    this.requestAccess.set(request, access);
    this.scope.noteAccess(access);
    this.openExchanges++;
    this.lastActivity = Date.now();
    try {
      return await this.dispatch(request, parsedBody);
    } finally {
      this.openExchanges--;
      this.lastActivity = Date.now();
    }
  }

  private async dispatch(request: Request, parsedBody: unknown): Promise<Response> {
    const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null;
    if (lastEventId && this.events !== undefined) return this.resume(request, lastEventId, this.events);
    if (request.method === 'GET' && this.initialised && !this.askedForRoots) {
      // The standalone stream is where a request of the gateway's own can reach the client (the
      // session's workspace from its roots: routing/roots-workspace.ts).
      const response = await this.transport.handleRequest(request, parsedBody);
      if (response.status === 200) {
        this.askedForRoots = true;
        this.scope.streamOpened();
      }
      return response;
    }
    const id = requestIdOf(parsedBody);
    if (id === undefined) return this.transport.handleRequest(request, parsedBody);
    const refused = await this.readInitOptions(parsedBody, id);
    if (refused !== undefined) return refused;
    const response = await this.transport.handleRequest(request, parsedBody);
    return this.initialised && response.status < 300 ? this.hooks.response(this.id, parsedBody, response) : response;
  }

  /**
   * An `initialize` settles the session's init options (kept for its requests, `deferTools`
   * handed to its scope, `eventStoreLimit` to its event history) and opens the servers its client
   * brings, before it is answered; a refusal answers it (initialize-2025.ts).
   */
  private async readInitOptions(body: unknown, id: RequestId): Promise<Response | undefined> {
    const settled = await settleInitialize(body, id, {
      readOptions: this.readOptions,
      sessionServers: this.sessionServers,
      hasBrought: this.brought !== undefined,
      open: () => ({
        base: this.scope,
        registry: this.options.scope.registry,
        catalogue: { separator: this.options.scope.catalogue.separator },
        owner: this.peer.sessionSink,
        logger: this.options.logger,
      }),
    });
    if (settled === undefined) return undefined;
    if (!settled.ok) return settled.response;
    if (settled.brought !== undefined) {
      this.brought = settled.brought;
      this.routing = settled.brought;
    }
    if (settled.options !== undefined) this.initOptions = settled.options;
    this.scope.setDeferTools(settled.deferTools);
    if (settled.options?.eventStoreLimit !== undefined) this.events?.lowerLimit(settled.options.eventStoreLimit);
    return undefined;
  }

  /**
   * A GET with `Last-Event-ID`: refused here with 400/410/503 when the store cannot resume from
   * it (see resume.ts); otherwise the transport replays the stream after the id and goes on with
   * its live tail.
   */
  private async resume(request: Request, lastEventId: string, events: SessionEventStore): Promise<Response> {
    const point = await events.resumePoint(lastEventId);
    if (!point.ok) return refusedResume(point);
    return this.transport.handleRequest(request);
  }

  /**
   * Idempotent: closes the client transport and every upstream connection of the session, and
   * drops its event history. Its place in the session budget is free from the first moment.
   */
  close(): Promise<void> {
    this.ticket.release();
    this.closing ??= (async () => {
      // First: its deletion is under way before a shutdown closes the store's connection.
      const forgetting = this.events?.forget().catch(() => undefined);
      await this.peer.close().catch(() => undefined);
      await Promise.all([this.scope.close(), this.brought?.close()]);
      await forgetting;
    })();
    return this.closing;
  }
}
