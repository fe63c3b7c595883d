/**
 * One live MCP connection to one upstream server: an SDK `Client` over a connector's transport.
 *
 * The link forwards requests verbatim (a pass-through result schema: the gateway relays, it does
 * not re-validate), caches list results until the upstream says `list_changed`, and routes what
 * the upstream originates to the downstream that provably caused it (`attribution.ts`: its
 * invariant is that nothing of principal A ever reaches principal B; `upstream-initiated.ts`
 * handles what the SDK dispatches of it). It notes the id of every
 * request it sends, so it knows which requests the upstream has not answered yet: a pooled
 * connection serves again only once none are open (`idle`, `whenIdle`).
 */
import { Client, type Transport } from '@modelcontextprotocol/client';
import type { ClientCapabilities, ServerCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import { UpstreamError } from '../errors.js';
import { progressTokenOf, upstreamMeta, type RequestMeta } from '../rpc/request-meta.js';
import { classifyUpstreamFailure, safeReason } from './failure.js';
import { ChangeListener } from './change-listener.js';
import { describeStartFailure } from './start-failure.js';
import { ListCache, type HintedList, type ListKind } from './list-cache.js';
import { Attribution } from './attribution.js';
import { passThroughResult } from '../rpc/pass-through.js';
import { tapSends } from './send-tap.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import type { LinkEvent } from './link-event.js';
import { STALE_LISTS, type ChangedList } from './server-changes.js';
import { startUpstreamSpan } from '../observability/tracing.js';
import { spanFailureOf } from '../observability/span-failure.js';
import { handleUpstreamInitiated } from './upstream-initiated.js';
import { LinkListeners } from './link-listeners.js';

/** The handshake's own bound, whatever a server's per-request timeout is. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

export interface LinkOptions {
  server: string;
  transport: Transport;
  /** `auto` probes with `server/discover` (HTTP); `legacy` runs the 2025 `initialize` handshake. */
  negotiation: 'auto' | 'legacy';
  requestTimeoutMs: number;
  logger: Logger;
  /**
   * The client capabilities the connection declares: its one client's for a session's own
   * connection, else only what the gateway can honour on it (client-capabilities.ts).
   */
  clientCapabilities: ClientCapabilities;
  /** Receives what cannot be tied to one call (session isolation); absent for shared links. */
  owner?: DownstreamSink;
  /**
   * The link serves one call at a time (a lease): what arrives while that call's request is the
   * only one open is that call's. A shared link without an owner attributes only progress.
   */
  exclusive?: boolean;
}

export interface ForwardOptions {
  /** Where messages caused by this call go. */
  sink: DownstreamSink;
  signal?: AbortSignal;
  /**
   * The downstream client's `_meta`, as the inbound server read it: the upstream request's `_meta`
   * is written from it (rpc/request-meta.ts), never from `params`. Its progress token is restored
   * on every relayed progress notification.
   */
  meta?: RequestMeta | undefined;
  /** Headers for this request's HTTP exchange (2026-era connections only; stdio has none). */
  headers?: Record<string, string>;
}

export class UpstreamLink {
  readonly server: string;
  private readonly client: Client;
  private readonly logger: Logger;
  private readonly requestTimeoutMs: number;
  private readonly attribution: Attribution;
  private readonly lists: ListCache;
  private readonly changes: ChangeListener;
  private readonly listeners: LinkListeners;
  private closedReason: string | undefined;

  private constructor(options: LinkOptions, client: Client) {
    this.server = options.server;
    this.client = client;
    this.logger = options.logger;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.listeners = new LinkListeners(this.logger);
    this.attribution = new Attribution({ owner: options.owner, exclusive: options.exclusive ?? false, logger: this.logger });
    this.changes = new ChangeListener({
      client,
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
        this.attribution.requests
          .send(undefined, () =>
            this.client.request({ method, params: cursor === undefined ? {} : { cursor } }, passThroughResult, {
              timeout: this.requestTimeoutMs,
            }),
          )
          .catch((error: unknown) => {
            throw classifyUpstreamFailure(this.server, error, this.modern);
          }),
    });
  }

  /** Moves on whenever a cached list is dropped, so merged views know to rebuild. */
  get listVersion(): number {
    return this.lists.version;
  }

  /** Connects and completes the handshake; rejects with an `UpstreamError` on failure. */
  static async connect(options: LinkOptions): Promise<UpstreamLink> {
    const client = new Client(
      { name: 'portcullis', version: '0.1.0' },
      {
        capabilities: options.clientCapabilities,
        versionNegotiation: { mode: options.negotiation },
        inputRequired: { autoFulfill: false },
      },
    );
    const link = new UpstreamLink(options, client);
    link.install();
    const transport = tapSends(options.transport, (message) => link.attribution.requests.noteSent(message));
    // The SDK calls a handler already on the transport before its own dispatch, for every message:
    // messages are attributed here, synchronously and in arrival order, while the call they
    // belong to is still in flight (the SDK would dispatch notifications after the response).
    transport.onmessage = (message) => link.attribution.claim(message);
    try {
      await client.connect(transport, { timeout: HANDSHAKE_TIMEOUT_MS });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new UpstreamError('UPSTREAM_START_FAILED', options.server, describeStartFailure(options.server, error, options.transport), error);
    }
    if (link.modern) link.changes.start();
    return link;
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  /** The upstream's `serverInfo` (name, version, icons…) from its handshake. */
  get serverInfo(): Readonly<Record<string, unknown>> | undefined {
    return this.client.getServerVersion() as Readonly<Record<string, unknown>> | undefined;
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  /** True when the connection negotiated the stateless 2026 revision (or later). */
  get modern(): boolean {
    const version = this.protocolVersion;
    return version !== undefined && version >= '2026-07-28';
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  get inFlightCount(): number {
    return this.attribution.inFlightCount;
  }

  /** True when the upstream has answered every request the link sent (none open, none abandoned). */
  get idle(): boolean {
    return this.attribution.requests.idle;
  }

  /**
   * Resolves true once the upstream has answered every open request (a cancelled call's
   * included), false when `timeoutMs` passes first or the connection closes.
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.attribution.requests.whenIdle(timeoutMs);
  }

  /** Subscribes to link-level events; returns the unsubscribe function. */
  on(listener: (event: LinkEvent) => void): () => void {
    return this.listeners.add(listener);
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
      modern: this.modern,
      clientCapabilities: options.sink.clientCapabilities,
      progressToken: call.progressToken,
      ...(span === undefined ? {} : { traceContext: span.carrier }),
    });
    const outbound = meta === undefined ? withoutMeta(params) : { ...params, _meta: meta };
    const send = () =>
      this.client.request({ method, params: outbound }, passThroughResult, {
        signal: options.signal,
        timeout: this.requestTimeoutMs,
        allowInputRequired: true,
        ...(options.headers !== undefined && this.modern ? { headers: options.headers } : {}),
      });
    try {
      // An aborted signal or a timeout makes the SDK cancel upstream: `notifications/cancelled`
      // on 2025-era connections, closing the request's own stream on 2026-era HTTP.
      const result = await this.attribution.requests.send(call, span === undefined ? send : () => span.run(send));
      await call.chain;
      span?.end();
      return result;
    } catch (error) {
      await call.chain;
      const failure = classifyUpstreamFailure(this.server, error, this.modern);
      span?.end(spanFailureOf(failure));
      throw failure;
    } finally {
      this.attribution.end(call);
    }
  }

  /** Sends a notification upstream (cancellation is handled by the request's signal). */
  async notify(message: RpcMessage): Promise<void> {
    if (this.closedReason !== undefined) return;
    await this.client.notification({ method: message.method, params: message.params });
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
    this.listeners.emit({ kind: 'listChanged', list });
  }

  async close(): Promise<void> {
    if (this.closedReason === undefined) this.markClosed('closed by gateway');
    await this.changes.close();
    await this.client.close().catch(() => undefined);
  }

  private markClosed(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.attribution.requests.clear();
    this.lists.invalidate();
    this.listeners.emit({ kind: 'closed', reason });
  }

  private install(): void {
    this.client.onclose = () => this.markClosed('connection closed');
    // Only a code: SDK transport errors can embed response bodies and redirect URLs.
    this.client.onerror = (error) => this.logger.debug({ reason: safeReason(error) }, 'upstream transport error');

    handleUpstreamInitiated(this.client, {
      attribution: this.attribution,
      logger: this.logger,
      listChanged: (list) => this.announceListChanged(list),
      emit: (event) => this.listeners.emit(event),
    });
  }
}

function withoutMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (params === undefined || !('_meta' in params)) return params;
  const { _meta: _dropped, ...rest } = params;
  return rest;
}
