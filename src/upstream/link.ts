/**
 * One live MCP connection to one upstream server: an SDK `Client` over a connector's transport.
 *
 * The link forwards requests verbatim (a pass-through result schema: the gateway relays, it does
 * not re-validate), caches list results until the upstream says `list_changed`, and routes what
 * the upstream originates to the right downstream: a server→client request or notification goes
 * to the one call in flight when there is exactly one, else to the link's owner (a 2025 session's
 * standalone stream), else it is refused — never guessed (DESIGN.md §5).
 */
import { Client, ProtocolError, type Transport } from '@modelcontextprotocol/client';
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import { UpstreamError } from '../errors.js';
import { classifyUpstreamFailure, safeReason } from './failure.js';
import { ChangeListener } from './change-listener.js';
import { ListCache, type ListKind } from './list-cache.js';
import { passThroughResult } from './pass-through.js';
import type { DownstreamSink, LinkEvent, RpcMessage } from './sink.js';

/** The handshake's own bound, whatever a server's per-request timeout is. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

export interface LinkOptions {
  server: string;
  transport: Transport;
  /** `auto` probes with `server/discover` (HTTP); `legacy` runs the 2025 `initialize` handshake. */
  negotiation: 'auto' | 'legacy';
  requestTimeoutMs: number;
  logger: Logger;
  /** Receives what cannot be tied to one call (session isolation); absent for shared links. */
  owner?: DownstreamSink;
  /**
   * The link serves one call at a time (a lease), so what arrives during a call is that call's.
   * A shared link without an owner attributes nothing it cannot prove (DESIGN.md §5).
   */
  exclusive?: boolean;
}

export interface ForwardOptions {
  /** Where messages caused by this call go. */
  sink: DownstreamSink;
  signal?: AbortSignal;
  /** The downstream client's progress token, restored on every relayed progress notification. */
  progressToken?: string | number;
}

interface InFlight {
  sink: DownstreamSink;
  /** Messages relayed for this call, in arrival order; awaited before its result is returned. */
  chain: Promise<void>;
}

/** Envelope keys of the 2026 revision; a 2025 upstream must not see them (it would answer 400). */
const ENVELOPE_PREFIX = 'io.modelcontextprotocol/';

/** Notifications the link itself consumes (cache invalidation, subscriptions); never relayed per call. */
const LINK_LEVEL_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/cancelled',
  'notifications/subscriptions/acknowledged',
]);

export class UpstreamLink {
  readonly server: string;
  private readonly client: Client;
  private readonly logger: Logger;
  private readonly requestTimeoutMs: number;
  private readonly owner: DownstreamSink | undefined;
  private readonly exclusive: boolean;
  private readonly inFlight = new Set<InFlight>();
  /** Our own progress tokens (sent upstream in place of the client's) → the call they belong to. */
  private readonly byProgressToken = new Map<string, { call: InFlight; clientToken: string | number }>();
  private nextProgressToken = 1;
  /** Where messages owned by no call go, in order. */
  private ownerChain: Promise<void> = Promise.resolve();
  private readonly lists: ListCache;
  private readonly changes: ChangeListener;
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  private closedReason: string | undefined;

  private constructor(options: LinkOptions, client: Client) {
    this.server = options.server;
    this.client = client;
    this.logger = options.logger;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.owner = options.owner;
    this.exclusive = options.exclusive ?? false;
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
        this.client
          .request({ method, params: cursor === undefined ? {} : { cursor } }, passThroughResult, { timeout: this.requestTimeoutMs })
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
        capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
        versionNegotiation: { mode: options.negotiation },
        inputRequired: { autoFulfill: false },
      },
    );
    const link = new UpstreamLink(options, client);
    link.install();
    // The SDK calls a handler already on the transport before its own dispatch, for every message:
    // notifications are attributed here, synchronously and in arrival order, while the call they
    // belong to is still in flight (the SDK would dispatch them after the response; PITFALLS.md).
    options.transport.onmessage = (message) => link.claim(message);
    try {
      await client.connect(options.transport, { timeout: HANDSHAKE_TIMEOUT_MS });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new UpstreamError('UPSTREAM_START_FAILED', options.server, `could not connect (${safeReason(error)})`, error);
    }
    if (link.modern) link.changes.start();
    return link;
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
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
    return this.inFlight.size;
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
    const call: InFlight = { sink: options.sink, chain: Promise.resolve() };
    let meta = params?._meta as Record<string, unknown> | undefined;
    if (meta !== undefined && !this.modern) meta = withoutEnvelope(meta);
    let token: string | undefined;
    if (options.progressToken !== undefined) {
      // Our own token upstream, mapped back to the client's on every relayed notification.
      token = `portcullis-${this.nextProgressToken++}`;
      this.byProgressToken.set(token, { call, clientToken: options.progressToken });
      meta = { ...meta, progressToken: token };
    }
    const outbound = meta === undefined ? withoutMeta(params) : { ...params, _meta: meta };
    this.inFlight.add(call);
    try {
      const result = await this.client.request({ method, params: outbound }, passThroughResult, {
        signal: options.signal,
        timeout: this.requestTimeoutMs,
        allowInputRequired: true,
      });
      await call.chain;
      return result;
    } catch (error) {
      await call.chain;
      throw classifyUpstreamFailure(this.server, error, this.modern);
    } finally {
      this.inFlight.delete(call);
      if (token !== undefined) this.byProgressToken.delete(token);
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

  async close(): Promise<void> {
    if (this.closedReason === undefined) this.markClosed('closed by gateway');
    await this.changes.close();
    await this.client.close().catch(() => undefined);
  }

  private emit(event: LinkEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.warn({ err: error }, 'link listener failed');
      }
    }
  }

  private markClosed(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.lists.invalidate();
    this.emit({ kind: 'closed', reason });
  }

  /**
   * The call (or owner) something the upstream originated belongs to, or undefined to refuse it:
   * the one call in flight on an exclusive or owned link; the owner (a 2025 session's standalone
   * stream) when several calls are in flight; nothing on a shared link, where the sole call in
   * flight may belong to a different client than the work that sent the message.
   */
  private attribute(): { sink: DownstreamSink; call?: InFlight } | undefined {
    if (this.inFlight.size === 1 && (this.exclusive || this.owner !== undefined)) {
      for (const call of this.inFlight) return { sink: call.sink, call };
    }
    return this.owner === undefined ? undefined : { sink: this.owner };
  }

  /** Relays one notification in order: behind everything already relayed to the same place. */
  private relay(target: { sink: DownstreamSink; call?: InFlight }, message: RpcMessage): void {
    const send = () => target.sink.notify(message).catch(() => undefined);
    if (target.call !== undefined) target.call.chain = target.call.chain.then(send);
    else this.ownerChain = this.ownerChain.then(send);
  }

  /** Sees every incoming message first; relays call-level notifications at arrival. */
  private claim(message: unknown): void {
    const note = message as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
    if (typeof note.method !== 'string' || note.id !== undefined) return; // requests and responses: the SDK's
    if (LINK_LEVEL_NOTIFICATIONS.has(note.method)) return;
    if (note.method === 'notifications/progress') {
      const owner = this.byProgressToken.get(String(note.params?.progressToken));
      if (owner !== undefined) {
        this.relay({ sink: owner.call.sink, call: owner.call }, { method: note.method, params: { ...note.params, progressToken: owner.clientToken } });
      }
      return;
    }
    const target = this.attribute();
    if (target === undefined) {
      this.logger.debug({ method: note.method }, 'dropped an upstream notification that no call owns');
      return;
    }
    this.relay(target, note.params === undefined ? { method: note.method } : { method: note.method, params: note.params });
  }

  private install(): void {
    this.client.onclose = () => this.markClosed('connection closed');
    // Only a code: SDK transport errors can embed response bodies and redirect URLs.
    this.client.onerror = (error) => this.logger.debug({ reason: safeReason(error) }, 'upstream transport error');

    this.client.fallbackNotificationHandler = async (notification) => {
      const params = notification.params as Record<string, unknown> | undefined;
      switch (notification.method) {
        case 'notifications/tools/list_changed':
          this.lists.invalidate(['tools']);
          this.emit({ kind: 'listChanged', list: 'tools' });
          return;
        case 'notifications/prompts/list_changed':
          this.lists.invalidate(['prompts']);
          this.emit({ kind: 'listChanged', list: 'prompts' });
          return;
        case 'notifications/resources/list_changed':
          this.lists.invalidate(['resources', 'resourceTemplates']);
          this.emit({ kind: 'listChanged', list: 'resources' });
          return;
        case 'notifications/resources/updated':
          this.emit({ kind: 'resourceUpdated', params: params ?? {} });
          return;
        default:
          return; // relayed in arrival order by `claim`
      }
    };

    this.client.fallbackRequestHandler = async (request, ctx) => {
      const sink = this.attribute()?.sink;
      if (sink === undefined || !sink.canRequest) {
        throw new ProtocolError(
          -32603,
          sink === undefined
            ? 'gateway cannot attribute this request to a client call'
            : 'the client of this call cannot receive server requests',
        );
      }
      return sink.request(
        { method: request.method, params: request.params as Record<string, unknown> | undefined },
        ctx.mcpReq.signal,
      ) as never;
    };
  }
}

function withoutEnvelope(meta: Record<string, unknown>): Record<string, unknown> | undefined {
  const kept = Object.entries(meta).filter(([key]) => !key.startsWith(ENVELOPE_PREFIX));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

function withoutMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (params === undefined || !('_meta' in params)) return params;
  const { _meta: _dropped, ...rest } = params;
  return rest;
}
