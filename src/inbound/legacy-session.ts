/**
 * One 2025-era client session: its wire transport (Streamable HTTP by default: SSE streams,
 * `Mcp-Session-Id`; or the 2024-11-05 HTTP+SSE transport, see legacy-sse/), the gateway `Server`
 * on it, and the session's upstream connections. Closing it closes all three, so a DELETE, an idle
 * expiry, a closed HTTP+SSE stream or shutdown reaps every child it spawned.
 */
import { randomUUID } from 'node:crypto';
import type { ServerCapabilities, Transport } from '@modelcontextprotocol/server';
import { errorResponse, GatewayError, refusal } from '../errors.js';
import { readDeferToolsOption } from '../catalogue/surface/session-option.js';
import { compileSessionServersGate } from '../config/session-servers.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import { policySchema } from '../policy/policy-schema.js';
import type { RouteScope } from '../routing/router.js';
import { SessionServersScope } from '../routing/session-servers-scope.js';
import type { Logger } from '../observability/logger.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { SessionScope, type ScopeOptions, type SessionServersOptions } from '../routing/scopes.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import type { SessionTicket } from '../session/session-admission.js';
import { createGatewayServer, sessionSink } from './gateway-server.js';
import { refusedResume } from './resume.js';
import { SessionHttpTransport } from './session-transport.js';
import { keyOf, requestIdOf, responseIdOf, type RequestId } from '../session/jsonrpc-id.js';
import type { GatewayMetrics } from '../observability/metrics.js';

/** What a session needs of the transport its client speaks (`SessionHttpTransport` is one). */
export interface SessionWire extends Transport {
  /** Serves one HTTP request of the session (after the session's own checks). */
  handleRequest(request: Request, parsedBody?: unknown): Promise<Response>;
  /** SSE responses open right now (a session with one is not idle). */
  readonly openStreams: number;
  /** A request the client cancelled gets no response: whatever waits for one is ended. */
  endCancelled(requestId: RequestId): void;
}

/** What the session gives its wire: the id, and the two moments the session must hear of. */
export interface SessionWireHooks {
  sessionId: string;
  onSessionInitialized(sessionId: string): void | Promise<void>;
  onSessionClosed(sessionId: string): void | Promise<void>;
}

export interface LegacySessionOptions {
  /** The authenticated principal that opened the session (undefined when auth is off). */
  principal: string | undefined;
  /** The workspace the session's `initialize` named (`_meta["portcullis/workspace"]`), if any. */
  workspace?: string;
  name: string;
  version: string;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  scope: ScopeOptions;
  /** The endpoint's catalogue over the primaries, for a session with no connection of its own. */
  sharedCatalogue?: Catalogue;
  /** The session's place in the gateway's session budget, given back when it closes. */
  ticket: SessionTicket;
  /** The session's stdio children are closed after this long without a call (the session stays). */
  childIdleTimeoutMs: number;
  logger: Logger;
  /** Where the session's SSE events are kept for `Last-Event-ID` resumption; absent means no replay. */
  eventStore?: GatewayEventStore;
  /** Close a long call's SSE response after this long (needs the event store). */
  pollAfterMs?: number;
  /** Counts each request of the session (observability/metrics.ts); absent: not counted. */
  metrics?: GatewayMetrics;
  /** A call unanswered after this long is answered as a resumable SSE stream; 0: every call streams. */
  streamAfterMs: number;
  onInitialized(session: LegacySession): void;
  onClosed(id: string): void;
  /** Builds the transport the client speaks; default: Streamable HTTP (`SessionHttpTransport`). */
  wire?(hooks: SessionWireHooks): SessionWire;
  // Used by the cluster (src/cluster/):
  /** The id to serve under (a session taken over from another replica keeps its id); default: random. */
  sessionId?: string;
  /** Sees each request's response on its way out (the cluster records in-flight requests). */
  tapResponse?(sessionId: string, body: unknown, response: Response): Response;
}

/** The default policy's judgement of servers a client brings: none accepted. */
const DEFAULT_SESSION_SERVERS: SessionServersOptions = (() => {
  const policy = policySchema.parse({});
  return { gate: compileSessionServersGate(policy), policyAllows: compileDeniedTools(policy.deniedTools) };
})();

/** In-flight requests one session may have; beyond it the client is told to slow down. */
const MAX_IN_FLIGHT = 1024;

/** SSE `retry:` (ms) in priming events when resumable: how soon a cut client reconnects. */
const RETRY_INTERVAL_MS = 1_000;

export class LegacySession {
  readonly principal: string | undefined;
  /** Ids of requests accepted and not yet answered (held until the response is sent, not until the client goes). */
  private readonly inFlight = new Set<string>();
  /** POSTs and GETs not answered yet; open SSE streams are counted by the transport. */
  private openExchanges = 0;
  private lastActivity = Date.now();
  /** The session id, random unless given; the key the registry holds the session under. */
  readonly id: string;
  readonly transport: SessionWire;
  private readonly scope: SessionScope;
  private readonly server;
  private closing: Promise<void> | undefined;
  private sessionId: string | undefined;
  private readonly events: SessionEventStore | undefined;
  private readonly tapResponse: LegacySessionOptions['tapResponse'];
  private readonly ticket: SessionTicket;
  private readonly sessionServers: SessionServersOptions;
  /** What requests route through: the session's scope, joined with the servers its client brought, if any. */
  private routing: RouteScope | undefined;
  private brought: SessionServersScope | undefined;
  private readonly options: LegacySessionOptions;

  constructor(options: LegacySessionOptions) {
    this.options = options;
    this.sessionServers = options.scope.sessionServers ?? DEFAULT_SESSION_SERVERS;
    this.principal = options.principal;
    this.tapResponse = options.tapResponse;
    this.ticket = options.ticket;
    // The id exists before `initialize` so the session's event history can be keyed by it.
    const id = options.sessionId ?? randomUUID();
    this.id = id;
    this.events = options.eventStore?.forSession(id);
    this.server = createGatewayServer(
      {
        name: options.name,
        version: options.version,
        capabilities: options.capabilities,
        instructions: options.instructions,
        era: 'legacy',
        logger: options.logger,
        pollAfterMs: options.pollAfterMs,
        ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      },
      () => this.routing ?? this.scope,
    );
    this.scope = new SessionScope(options.scope, {
      key: { principal: options.principal, workspace: options.workspace },
      owner: sessionSink(this.server),
      clientCapabilities: () => this.server.getClientCapabilities(),
      ...(options.sharedCatalogue === undefined ? {} : { shared: options.sharedCatalogue }),
      childIdleTimeoutMs: options.childIdleTimeoutMs,
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
    const send = this.transport.send.bind(this.transport);
    this.transport.send = (message, sendOptions) => {
      const answered = keyOf(responseIdOf(message));
      if (answered !== undefined) this.inFlight.delete(answered);
      return send(message, sendOptions);
    };
  }

  /**
   * A cancelled request gets no response (MCP: the server stops and stays silent), so its id is
   * released when the client cancels it, and its response stream, if still open, is ended.
   */
  private releaseCancelled(body: unknown): void {
    const note = body as { method?: unknown; params?: { requestId?: unknown } } | undefined;
    if (note?.method !== 'notifications/cancelled') return;
    const key = keyOf(note.params?.requestId);
    if (key === undefined || !this.inFlight.delete(key)) return;
    this.transport.endCancelled(note.params?.requestId as RequestId);
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
    await this.server.connect(this.transport);
  }

  /**
   * Serves one HTTP request of this session. A request whose JSON-RPC id is already in flight in
   * this session is refused: with two requests under one id, responses and cancellations cannot
   * be told apart (mcp-proxy and supergateway hang or misroute there).
   */
  async handle(request: Request, parsedBody?: unknown): Promise<Response> {
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
    const id = keyOf(requestIdOf(parsedBody));
    if (id === undefined) {
      this.releaseCancelled(parsedBody);
      return this.transport.handleRequest(request, parsedBody);
    }
    // Answered with id null: under the id it would read as the answer to the call in flight.
    if (this.inFlight.has(id)) return refusal('DUPLICATE_REQUEST_ID', 'a request with this id is already in flight in this session');
    if (this.inFlight.size >= MAX_IN_FLIGHT) {
      return refusal('IN_FLIGHT_LIMIT', 'too many requests in flight in this session', { id: requestIdOf(parsedBody)! });
    }
    const refused = await this.readInitOptions(parsedBody, requestIdOf(parsedBody)!);
    if (refused !== undefined) return refused;
    this.inFlight.add(id);
    try {
      const response = await this.transport.handleRequest(request, parsedBody);
      // Refused at the transport (406, 400…): the request never reached a handler, and no
      // response will ever be sent under its id. (A 200 in one JSON body released its id when the
      // answer was sent, a 202 of HTTP+SSE releases it when the answer goes on the stream; judged
      // by status so the hot path never builds the answer's headers.)
      if (response.status >= 300) {
        this.inFlight.delete(id);
        return response;
      }
      // cluster: the in-flight record for failover (src/cluster/inflight-tap.ts; JSON passes through)
      return this.tapResponse !== undefined && this.initialised ? this.tapResponse(this.id, parsedBody, response) : response;
    } catch (error) {
      this.inFlight.delete(id);
      throw error;
    }
  }

  /**
   * The init options this session honours from its `initialize` (`_meta["portcullis/options"]`):
   * `deferTools`. A bad value refuses the `initialize` (-32602 naming the option). Servers the
   * client brings (`_meta["portcullis/servers"]`) are judged by the policy (-32602 naming the
   * server and field) and opened before the `initialize` is answered: a required one that cannot
   * start refuses it (naming the server), and nothing of them stays open.
   */
  private async readInitOptions(body: unknown, id: RequestId): Promise<Response | undefined> {
    const message = body as { method?: unknown; params?: { _meta?: unknown } } | undefined;
    if (message?.method !== 'initialize') return undefined;
    const option = readDeferToolsOption(message.params?._meta);
    if (!option.ok) return errorResponse(new GatewayError('INVALID_PARAMS', `initialize: ${option.message}`), { id });
    const supplied = this.sessionServers.gate(body);
    if (!supplied.ok) return errorResponse(supplied.error, { id });
    if (supplied.servers !== undefined && this.brought === undefined) {
      const opened = await SessionServersScope.open({
        base: this.scope,
        registry: this.options.scope.registry,
        servers: supplied.servers,
        settings: this.sessionServers,
        catalogue: { separator: this.options.scope.catalogue.separator },
        owner: sessionSink(this.server),
        logger: this.options.logger,
      });
      if (opened instanceof GatewayError) return errorResponse(opened, { id });
      this.brought = opened;
      this.routing = opened;
    }
    this.scope.setDeferTools(option.value);
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
      await this.server.close().catch(() => undefined);
      await Promise.all([this.scope.close(), this.brought?.close()]);
      await forgetting;
    })();
    return this.closing;
  }
}
