/**
 * One live MCP connection to one upstream server: the gateway's own JSON-RPC peer (peer.ts) over a
 * connector's wire, after the handshake (handshake.ts).
 *
 * The link forwards requests as they are (results are relayed, not re-validated: the upstream and
 * the client each validate their own side), caches list results until the upstream says
 * `list_changed`, and routes what the upstream originates:
 * - link-level notifications (`list_changed`, `resources/updated`, `tasks/status`) become link
 *   events (`LinkEvent`) for the link's listeners;
 * - every other notification, and a server→client request (sampling, elicitation, roots), goes to
 *   the downstream that provably caused it (attribution.ts: nothing of principal A ever reaches
 *   principal B); a request only when that client declared the capability
 *   (rpc/client-capabilities.ts), else it is refused with a JSON-RPC error, never guessed.
 * The peer keeps every request open until the upstream answers it, so a pooled connection serves
 * again only once none are open (`idle`, `whenIdle`).
 */
import { ProtocolError, type ClientCapabilities, type ServerCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import { GatewayError, UpstreamError, UpstreamRpcError } from '../errors.js';
import { progressTokenOf, upstreamMeta, type RequestMeta } from '../rpc/request-meta.js';
import { checkServerRequest } from '../rpc/client-capabilities.js';
import { classifyUpstreamFailure } from './failure.js';
import { ChangeListener } from './change-listener.js';
import { describeStartFailure } from './start-failure.js';
import { ListCache, type HintedList, type ListKind } from './list-cache.js';
import { Attribution, type Call } from './attribution.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import { STALE_LISTS, type ChangedList } from './server-changes.js';
import { startUpstreamSpan } from '../observability/tracing.js';
import { spanFailureOf } from '../observability/span-failure.js';
import { RpcPeer, type Wire } from './peer.js';
import { handshake, type Handshake } from './handshake.js';
import { PROTOCOL_2026, type Era } from '../rpc/era.js';

/** The handshake's own bound, whatever a server's per-request timeout is. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

/** Link-level events (not tied to a call) that owners of a link subscribe to. */
export type LinkEvent =
  | { kind: 'listChanged'; list: 'tools' | 'prompts' | 'resources' }
  | { kind: 'resourceUpdated'; params: Record<string, unknown> }
  /** `notifications/tasks/status`: its `taskId` is the upstream's, so only the task table can route it. */
  | { kind: 'taskStatus'; params: Record<string, unknown> }
  | { kind: 'closed'; reason: string };

export interface LinkOptions {
  server: string;
  /** The connector's wire (connector.ts); the link starts it. */
  transport: Wire;
  /** `auto` probes with `server/discover` (HTTP); `legacy` runs the 2025 `initialize` handshake. */
  negotiation: 'auto' | '2025';
  requestTimeoutMs: number;
  logger: Logger;
  /**
   * The client capabilities the connection declares: its one client's for a session's own
   * connection, else only what the gateway can honour on it (client-capabilities.ts). Absent:
   * none declared.
   */
  clientCapabilities?: ClientCapabilities | undefined;
  /** Receives what cannot be tied to one call (session isolation); absent for shared links. */
  owner?: DownstreamSink | undefined;
  /**
   * The link serves one call at a time (a lease): what arrives while that call's request is the
   * only one open is that call's. A shared link without an owner attributes only progress.
   */
  exclusive?: boolean;
}

export interface ForwardOptions {
  /** Where messages caused by this call go. */
  sink: DownstreamSink;
  signal?: AbortSignal | undefined;
  /**
   * The downstream client's `_meta`, as the inbound server read it: the upstream request's `_meta`
   * is written from it (rpc/request-meta.ts), never from `params`. Its progress token is restored
   * on every relayed progress notification.
   */
  meta?: RequestMeta | undefined;
  /** Headers for this request's HTTP exchange (2026-era connections only; stdio has none). */
  headers?: Record<string, string> | undefined;
}

export class UpstreamLink {
  readonly server: string;
  private readonly peer: RpcPeer<Call>;
  private readonly logger: Logger;
  private readonly requestTimeoutMs: number;
  private readonly attribution: Attribution;
  private readonly lists: ListCache;
  private readonly changes: ChangeListener;
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  private closedReason: string | undefined;
  private settled: Handshake | undefined;

  private constructor(options: LinkOptions) {
    this.server = options.server;
    this.logger = options.logger;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.peer = new RpcPeer<Call>({
      server: options.server,
      wire: options.transport,
      logger: options.logger,
      onRequest: (request, signal) => this.serverRequest(request.method, request.params, signal),
      onNotification: (method, params) => this.notification(method, params),
      onClose: () => this.markClosed('connection closed'),
    });
    this.attribution = new Attribution({
      owner: options.owner,
      exclusive: options.exclusive ?? false,
      soleLiveCall: () => this.peer.soleLiveCall(),
      logger: this.logger,
    });
    this.changes = new ChangeListener({
      peer: this.peer,
      ackTimeoutMs: this.requestTimeoutMs,
      capabilities: () => this.capabilities,
      closed: () => this.closed,
      onLost: () => this.lists.invalidate(),
      logger: this.logger,
    });
    this.lists = new ListCache({
      server: this.server,
      capabilities: () => this.capabilities,
      hearsChangesOf: (kind) => this.changes.hears(kind),
      fetchPage: (method, cursor) =>
        this.peer
          .request(method, cursor === undefined ? {} : { cursor }, { timeoutMs: this.requestTimeoutMs })
          .then(complete, (error: unknown) => {
            throw classifyUpstreamFailure(this.server, error, this.era);
          }),
    });
  }

  /** Moves on whenever a cached list is dropped, so merged views know to rebuild. */
  get listVersion(): number {
    return this.lists.version;
  }

  /** Connects and completes the handshake; rejects with an `UpstreamError` on failure. */
  static async connect(options: LinkOptions): Promise<UpstreamLink> {
    const link = new UpstreamLink(options);
    try {
      await link.peer.start();
      link.settled = await handshake(link.peer, {
        negotiation: options.negotiation,
        clientCapabilities: options.clientCapabilities ?? {},
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
      });
    } catch (error) {
      // Described before closing: a child that exited at start is then still its own account.
      const reason = describeStartFailure(options.server, error, options.transport);
      await link.peer.close();
      throw new UpstreamError('UPSTREAM_START_FAILED', options.server, reason, error);
    }
    if (link.era === '2026') link.changes.start();
    return link;
  }

  get capabilities(): ServerCapabilities {
    return this.settled?.capabilities ?? {};
  }

  /** The upstream's `serverInfo` (name, version, icons…) from its handshake. */
  get serverInfo(): Readonly<Record<string, unknown>> | undefined {
    return this.settled?.serverInfo;
  }

  get instructions(): string | undefined {
    return this.settled?.instructions;
  }

  get protocolVersion(): string | undefined {
    return this.settled?.protocolVersion;
  }

  /** The era the connection negotiated: '2026' for the stateless 2026-07-28 revision (or later). */
  get era(): Era {
    const version = this.protocolVersion;
    return version !== undefined && version >= PROTOCOL_2026 ? '2026' : '2025';
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  get inFlightCount(): number {
    return this.attribution.inFlightCount;
  }

  /** True when the upstream has answered every request the link sent (none open, none abandoned). */
  get idle(): boolean {
    return this.peer.idle;
  }

  /**
   * Resolves true once the upstream has answered every open request (a cancelled call's
   * included), false when `timeoutMs` passes first or the connection closes.
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.peer.whenIdle(timeoutMs);
  }

  /** Subscribes to link-level events; returns the unsubscribe function. */
  on(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Forwards one request and resolves with the upstream's result, untouched, after every message
   * the upstream sent for this call before its result has been relayed.
   */
  async request(method: string, params: Record<string, unknown> | undefined, options: ForwardOptions): Promise<Record<string, unknown>> {
    if (this.closedReason !== undefined) {
      throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed');
    }
    const call = this.attribution.begin(options.sink, progressTokenOf(options.meta));
    // 2026-07-28: capabilities travel with each request; the requesting client's, not the link's.
    // Inside a traced request only (observability/tracing.ts): the client span's context goes
    // upstream in `_meta` (and as an HTTP header, added by the connector's fetch).
    const span = startUpstreamSpan(this.server, method, params);
    // Our own progress token upstream, mapped back to the client's on every relayed notification.
    const meta = upstreamMeta(options.meta, {
      era: this.era,
      clientCapabilities: options.sink.clientCapabilities,
      progressToken: call.progressToken,
      ...(span === undefined ? {} : { traceContext: span.carrier }),
    });
    const outbound = meta === undefined ? withoutMeta(params) : { ...params, _meta: meta };
    const send = () =>
      this.peer.request(method, outbound, {
        call,
        signal: options.signal,
        timeoutMs: this.requestTimeoutMs,
        headers: options.headers !== undefined && this.era === '2026' ? options.headers : undefined,
      });
    try {
      // An aborted signal or a timeout cancels upstream (peer.ts): `notifications/cancelled` on
      // 2025-era connections, closing the request's own stream on 2026-era HTTP.
      const result = await (span === undefined ? send() : span.run(send));
      await call.chain;
      span?.end();
      return complete(result);
    } catch (error) {
      await call.chain;
      const failure = classifyUpstreamFailure(this.server, error, this.era);
      span?.end(spanFailureOf(failure));
      throw failure;
    } finally {
      this.attribution.end(call);
    }
  }

  /** Sends a notification upstream (cancellation is handled by the request's signal). */
  async notify(message: RpcMessage): Promise<void> {
    if (this.closedReason !== undefined) return;
    await this.peer.notify(message.method, message.params);
  }

  /** The full list (all pages) of one kind, from the connection's cache (see list-cache.ts). */
  list(kind: ListKind): Promise<unknown[]> {
    return this.lists.list(kind);
  }

  /** The full list with what the upstream promised about its freshness and scope. */
  hintedList(kind: ListKind): Promise<HintedList> {
    return this.lists.hinted(kind);
  }

  /**
   * Drops cached lists because another connection to the same server announced a change: the
   * upstream's state may be shared between its connections (server-changes.ts).
   */
  invalidateLists(kinds: readonly ListKind[]): void {
    this.lists.invalidate(kinds);
  }

  /**
   * What an upstream's `list_changed` does, for a change the gateway made itself (a reload moved
   * this server's tool filters, or restarted it): the cached list is dropped and every listener
   * told, so the sessions that list through this connection hear `list_changed` in turn.
   */
  announceListChanged(list: ChangedList): void {
    this.lists.invalidate(STALE_LISTS[list]);
    this.emit({ kind: 'listChanged', list });
  }

  async close(): Promise<void> {
    if (this.closedReason === undefined) this.markClosed('closed by gateway');
    await this.changes.close();
    await this.peer.close();
  }

  private markClosed(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.lists.invalidate();
    this.emit({ kind: 'closed', reason });
  }

  /** A listener that throws is logged and the others still hear the event. */
  private emit(event: LinkEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.warn({ err: error }, 'link listener failed');
      }
    }
  }

  /** What the upstream notifies, in arrival order: link-level events, or relayed per call. */
  private notification(method: string, params: Record<string, unknown> | undefined): void {
    switch (method) {
      case 'notifications/tools/list_changed':
        this.announceListChanged('tools');
        return;
      case 'notifications/prompts/list_changed':
        this.announceListChanged('prompts');
        return;
      case 'notifications/resources/list_changed':
        this.announceListChanged('resources');
        return;
      case 'notifications/resources/updated':
        this.emit({ kind: 'resourceUpdated', params: params ?? {} });
        return;
      case 'notifications/tasks/status':
        // A task outlives its call: its status belongs to the task's owner, whoever's call is open now.
        this.emit({ kind: 'taskStatus', params: params ?? {} });
        return;
      case 'notifications/cancelled':
      case 'notifications/subscriptions/acknowledged':
        return; // the peer's own business
      default:
        this.attribution.notification(method, params);
    }
  }

  /** A server→client request: to the client that caused it, if it declared the capability. */
  private serverRequest(method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    const sink = this.attribution.requestSink(method);
    if (sink === undefined || !sink.canRequest) {
      return Promise.reject(
        new GatewayError(
          'UNATTRIBUTABLE',
          sink === undefined ? 'gateway cannot attribute this request to a client call' : 'the client of this call cannot receive server requests',
        ),
      );
    }
    const allowed = checkServerRequest(sink.clientCapabilities, method, params);
    if (!allowed.ok) {
      this.logger.debug({ method, code: allowed.code }, 'refused an upstream request the client did not declare');
      return Promise.reject(new GatewayError(allowed.code, allowed.message));
    }
    // The client's own JSON-RPC error goes back as it answered; anything else is the gateway's.
    return sink.request(params === undefined ? { method } : { method, params }, signal).catch((error: unknown) => {
      throw error instanceof ProtocolError ? new UpstreamRpcError(error.code, error.message, error.data) : error;
    });
  }
}

/**
 * A result as the gateway hands it on: a 2026 `resultType: "complete"` is the default the
 * gateway's own answers restate per client era, so it is dropped here; `input_required` stays.
 */
function complete(result: Record<string, unknown>): Record<string, unknown> {
  if (result.resultType !== 'complete') return result;
  const { resultType: _complete, ...rest } = result;
  return rest;
}

function withoutMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (params === undefined || !('_meta' in params)) return params;
  const { _meta: _dropped, ...rest } = params;
  return rest;
}
