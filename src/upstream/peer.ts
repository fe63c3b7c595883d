/**
 * The gateway's own JSON-RPC peer on one upstream connection: it numbers the requests it sends,
 * keeps every one open until the upstream answers it, times them out and cancels them, answers
 * the requests the upstream sends (handing them to the link), and passes notifications on in
 * arrival order. It runs over a `Wire` (stdio framing, Streamable HTTP, HTTP+SSE: one dumb pipe
 * each) and parses nothing beyond the JSON-RPC envelope: results are handed on as they arrived.
 *
 * Open requests (MCP 2025-11-25, basic/utilities/cancellation): a request is open from the moment
 * it is handed to the wire until a response with its id arrives or the connection closes. One the
 * caller gave up on (cancelled, timed out) stays open, marked abandoned: the upstream may still be
 * working on it (a receiver SHOULD NOT answer a cancelled request, and may not have seen the
 * cancellation yet), so whatever it sends meanwhile may be that call's. What is open is what the
 * link proves attribution against (`soleLiveCall`, attribution.ts) and what decides when a pooled
 * connection may serve again (`idle`, `whenIdle`).
 *
 * Cancellation: `notifications/cancelled` naming the request; on a 2026-era connection over a wire
 * with a stream per request (Streamable HTTP), closing that request's stream instead (MCP
 * 2026-07-28, Transports: the stream's end is the cancellation).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { errorMessage, GatewayError, UpstreamError, UpstreamRpcError } from '../errors.js';
import type { Logger } from '../observability/logger.js';

export type JsonRpcId = string | number;
type Params = Record<string, unknown>;

/** What one wire passes up: a request or notification of the upstream's, or a response to ours. */
export type Inbound =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Params | undefined }
  | { kind: 'notification'; method: string; params: Params | undefined }
  | { kind: 'result'; id: JsonRpcId; result: Params }
  | { kind: 'error'; id: JsonRpcId; code: number; message: string; data: unknown };

export interface WireSendOptions {
  /** Aborting it closes this request's own stream (wires with `hasPerRequestStream`). */
  requestSignal?: AbortSignal;
  /** Extra HTTP headers for this request's exchange (HTTP wires; stdio has none). */
  headers?: Record<string, string>;
  /** Called when this request's own stream ends (a `subscriptions/listen` stream). */
  onRequestStreamEnd?: () => void;
}

/**
 * One upstream connection as a pipe of JSON-RPC messages: start it, send, close; messages and the
 * close come back through the callbacks. The SDK's client transports have this shape too.
 */
export interface Wire {
  start(): Promise<void>;
  send(message: JSONRPCMessage, options?: WireSendOptions): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  /** Told once the handshake settled on a protocol version (HTTP wires send it as a header). */
  setProtocolVersion?(version: string): void;
  /** Streamable HTTP: each request has a stream of its own, closed to cancel it (2026 era). */
  readonly hasPerRequestStream?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/**
 * What a JSON value is as JSON-RPC 2.0, judged on its envelope alone (no schema of any method's
 * params or result): undefined for anything that is not a request, notification or response.
 */
export function classifyInbound(value: unknown): Inbound | undefined {
  if (!isObject(value) || value.jsonrpc !== '2.0') return undefined;
  const { id, method, params } = value;
  if (params !== undefined && !isObject(params)) return undefined;
  if (typeof method === 'string') {
    if (id === undefined) return { kind: 'notification', method, params };
    return isId(id) ? { kind: 'request', id, method, params } : undefined;
  }
  if (!isId(id)) return undefined;
  if (isObject(value.result)) return { kind: 'result', id, result: value.result };
  const error = value.error;
  if (isObject(error) && typeof error.code === 'number' && Number.isInteger(error.code)) {
    return { kind: 'error', id, code: error.code, message: typeof error.message === 'string' ? error.message : '', data: error.data };
  }
  return undefined;
}

/** True for a value `classifyInbound` accepts: what a wire may pass up as a message. */
export function isRpcMessage(value: unknown): value is JSONRPCMessage {
  return classifyInbound(value) !== undefined;
}

/** Requests of the upstream being answered at once, at most; more are refused until some finish. */
const MAX_UPSTREAM_REQUESTS = 64;
/** Abandoned requests kept open, at most; past it the oldest is forgotten (see `soleLiveCall`). */
const MAX_ABANDONED = 1024;

interface Open<C> {
  readonly call: C | undefined;
  abandoned: boolean;
  /** Set while the caller waits: the answer, or the reason there will be none. */
  settle?: ((answer: Inbound & { kind: 'result' | 'error' }) => void) | undefined;
  fail?: ((error: Error) => void) | undefined;
}

export interface RequestOptions<C> {
  /** The call this request is sent for (absent for the link's own requests: list pages). */
  call?: C | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  headers?: Record<string, string> | undefined;
}

/** A long-lived request (`subscriptions/listen`): not an open request, ended by either side. */
export interface PeerStream {
  readonly id: string;
  close(): void;
}

export interface PeerOptions {
  server: string;
  wire: Wire;
  logger: Logger;
  /** A request of the upstream's: resolves with the result, rejects with the refusal to answer. */
  onRequest(request: { id: JsonRpcId; method: string; params: Params | undefined }, signal: AbortSignal): Promise<Params>;
  /** A notification, in arrival order, synchronously. */
  onNotification(method: string, params: Params | undefined): void;
  /** The wire closed (or `close` was called): every open request has been failed. */
  onClose(): void;
}

export class RpcPeer<C = unknown> {
  readonly server: string;
  private readonly options: PeerOptions;
  private readonly wire: Wire;
  private nextId = 1;
  private readonly open = new Map<string, Open<C>>();
  private abandonedCount = 0;
  private readonly idleWaiters = new Set<(reusable: boolean) => void>();
  /** Requests of the upstream's being answered: their cancellation aborts the work. */
  private readonly answering = new Map<string, AbortController>();
  private readonly streams = new Map<string, { onEnd(reason: 'remote' | 'local'): void; onAck?: (params: Params | undefined) => void }>();
  private closed = false;
  /** Why the wire is closing, when it said so (an upstream message over the cap). */
  private closeReason: UpstreamError | undefined;
  /** The negotiated revision; requests carry the 2026 envelope once it is modern. */
  private envelope: Params | undefined;
  private perRequestStreams = false;

  constructor(options: PeerOptions) {
    this.server = options.server;
    this.options = options;
    this.wire = options.wire;
    this.wire.onmessage = (message) => this.receive(message);
    this.wire.onclose = () => this.closedByWire();
    // The link's logger hears failures through their requests; a message over the cap is why the
    // wire closes next, and what the requests open on it then fail with.
    this.wire.onerror = (error) => {
      if (error instanceof UpstreamError && error.code === 'UPSTREAM_MESSAGE_TOO_LARGE') this.closeReason = error;
    };
  }

  start(): Promise<void> {
    return this.wire.start();
  }

  /**
   * From now on every request and notification carries the 2026 `_meta` envelope (MCP 2026-07-28,
   * "Request Metadata"); the caller's own `_meta` keys win over it.
   */
  useEnvelope(envelope: Params): void {
    this.envelope = envelope;
    this.perRequestStreams = this.wire.hasPerRequestStream === true;
  }

  setProtocolVersion(version: string): void {
    this.wire.setProtocolVersion?.(version);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True when the upstream has answered every request sent (none open, none abandoned). */
  get idle(): boolean {
    return this.open.size === 0;
  }

  /**
   * The call that is provably the cause of whatever the upstream sends now: the only open
   * request's, when it was sent for a call and not abandoned. Undefined when none is open, when
   * several are (the upstream could be working on any), or when the only one is abandoned.
   */
  soleLiveCall(): C | undefined {
    if (this.open.size !== 1) return undefined;
    for (const entry of this.open.values()) return entry.abandoned ? undefined : entry.call;
    return undefined;
  }

  /**
   * Resolves true once every open request is answered; false if `timeoutMs` passes first or the
   * connection closes, when the connection is not fit to serve again.
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.idle) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (reusable: boolean) => {
        clearTimeout(timer);
        this.idleWaiters.delete(settle);
        resolve(reusable);
      };
      const timer = setTimeout(() => settle(false), timeoutMs);
      timer.unref();
      this.idleWaiters.add(settle);
    });
  }

  /**
   * Sends one request and resolves with the upstream's result as it arrived; rejects with
   * `UpstreamRpcError` for the upstream's JSON-RPC error, `UPSTREAM_TIMEOUT` after `timeoutMs`,
   * `UPSTREAM_UNAVAILABLE` when the connection closes or the caller's signal aborts, and with the
   * wire's own error when the request could not be sent.
   */
  request(method: string, params: Params | undefined, options: RequestOptions<C>): Promise<Params> {
    if (this.closed) return Promise.reject(this.closedError());
    if (options.signal?.aborted) return Promise.reject(this.cancelledError());
    const id = this.nextId++;
    const key = String(id);
    const entry: Open<C> = { call: options.call, abandoned: false };
    this.open.set(key, entry);
    const requestAbort = this.perRequestStreams ? new AbortController() : undefined;
    return new Promise<Params>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        entry.settle = undefined;
        entry.fail = undefined;
      };
      const giveUp = (error: Error) => {
        if (entry.settle === undefined) return;
        done();
        this.abandon(key, entry);
        if (requestAbort !== undefined) requestAbort.abort();
        else void this.sendNotification('notifications/cancelled', { requestId: id, reason: error.message }).catch(() => undefined);
        reject(error);
      };
      const onAbort = () => giveUp(this.cancelledError());
      entry.settle = (answer) => {
        done();
        if (answer.kind === 'result') resolve(answer.result);
        else reject(new UpstreamRpcError(answer.code, answer.message, answer.data));
      };
      entry.fail = (error) => {
        done();
        reject(error);
      };
      timer = setTimeout(() => giveUp(new UpstreamError('UPSTREAM_TIMEOUT', this.server, 'did not answer in time')), options.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const message = { jsonrpc: '2.0' as const, id, method, params: this.enveloped(params) };
      const sendOptions: WireSendOptions = {};
      if (requestAbort !== undefined) sendOptions.requestSignal = requestAbort.signal;
      if (options.headers !== undefined) sendOptions.headers = options.headers;
      this.wire.send(message as JSONRPCMessage, sendOptions).catch((error: unknown) => {
        // Never delivered (an HTTP error status, a write to a closed pipe): nothing is open upstream.
        this.forget(key);
        entry.fail?.(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** Sends one notification (with the 2026 envelope on a 2026-era connection). */
  notify(method: string, params: Params | undefined): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.sendNotification(method, params);
  }

  /**
   * Opens a long-lived request (`subscriptions/listen`) under a string id of its own: it is not
   * an open request (it never blocks idleness or attribution). `onAck` hears the upstream's
   * `notifications/subscriptions/acknowledged` for it; `onEnd` its end, whoever ended it.
   */
  stream(method: string, params: Params | undefined, handlers: { onAck(params: Params | undefined): void; onEnd(reason: 'remote' | 'local'): void }): PeerStream {
    const id = `${method}:${this.nextId++}`;
    const abort = new AbortController();
    let ended = false;
    const end = (reason: 'remote' | 'local') => {
      if (ended) return;
      ended = true;
      this.streams.delete(id);
      abort.abort();
      handlers.onEnd(reason);
    };
    this.streams.set(id, { onAck: handlers.onAck, onEnd: end });
    const message = { jsonrpc: '2.0' as const, id, method, params: this.enveloped(params) };
    this.wire
      .send(message as JSONRPCMessage, { requestSignal: abort.signal, onRequestStreamEnd: () => end('remote') })
      .catch(() => end('remote'));
    return {
      id,
      close: () => {
        if (ended) return;
        end('local');
        void this.notify('notifications/cancelled', { requestId: id }).catch(() => undefined);
      },
    };
  }

  /** Closes the wire; every open request fails as the connection closed. */
  async close(): Promise<void> {
    this.fail();
    await this.wire.close().catch(() => undefined);
  }

  private enveloped(params: Params | undefined): Params | undefined {
    const envelope = this.envelope;
    if (envelope === undefined) return params;
    const meta = params?._meta;
    return { ...params, _meta: isObject(meta) ? { ...envelope, ...meta } : envelope };
  }

  private sendNotification(method: string, params: Params | undefined): Promise<void> {
    const enveloped = this.enveloped(params);
    const message = enveloped === undefined ? { jsonrpc: '2.0' as const, method } : { jsonrpc: '2.0' as const, method, params: enveloped };
    return this.wire.send(message as JSONRPCMessage);
  }

  private abandon(key: string, entry: Open<C>): void {
    if (entry.abandoned || !this.open.has(key)) return;
    entry.abandoned = true;
    this.abandonedCount++;
    if (this.abandonedCount <= MAX_ABANDONED) return;
    // An upstream that never answers what it was told to drop: forget the oldest such request.
    for (const [oldKey, old] of this.open) {
      if (!old.abandoned) continue;
      this.forget(oldKey);
      break;
    }
  }

  private forget(key: string): void {
    const entry = this.open.get(key);
    if (entry === undefined) return;
    this.open.delete(key);
    if (entry.abandoned) this.abandonedCount--;
    if (this.open.size === 0) this.wake(true);
  }

  private receive(raw: unknown): void {
    const message = classifyInbound(raw);
    if (message === undefined) {
      this.options.logger.debug('skipped an upstream message that is not JSON-RPC');
      return;
    }
    switch (message.kind) {
      case 'result':
      case 'error':
        this.answer(message);
        return;
      case 'notification':
        this.notification(message.method, message.params);
        return;
      case 'request':
        this.upstreamRequest(message.id, message.method, message.params);
        return;
      default: {
        const unreachable: never = message;
        throw new TypeError(`unknown message kind ${(unreachable as { kind: string }).kind}`);
      }
    }
  }

  private answer(message: Inbound & { kind: 'result' | 'error' }): void {
    const key = String(message.id);
    const stream = this.streams.get(key);
    if (stream !== undefined) {
      stream.onEnd('remote');
      return;
    }
    const entry = this.open.get(key);
    if (entry === undefined) return; // long forgotten, or never ours
    const settle = entry.settle;
    this.forget(key);
    settle?.(message);
  }

  private notification(method: string, params: Params | undefined): void {
    if (method === 'notifications/cancelled') {
      const requestId = params?.requestId;
      if (isId(requestId)) {
        this.answering.get(String(requestId))?.abort();
        const stream = this.streams.get(String(requestId));
        if (stream !== undefined) {
          stream.onEnd('remote');
          return;
        }
      }
    } else if (method === 'notifications/subscriptions/acknowledged') {
      const meta = params?._meta;
      const id = isObject(meta) ? meta['io.modelcontextprotocol/subscriptionId'] : undefined;
      const stream = typeof id === 'string' ? this.streams.get(id) : undefined;
      if (stream !== undefined) {
        stream.onAck?.(params);
        return;
      }
    }
    try {
      this.options.onNotification(method, params);
    } catch (error) {
      this.options.logger.warn({ err: error, method }, 'upstream notification handler failed');
    }
  }

  private upstreamRequest(id: JsonRpcId, method: string, params: Params | undefined): void {
    // The 2026 revision has no server→client requests (they travel inside `input_required` results).
    if (this.envelope !== undefined) {
      this.options.logger.debug({ method }, 'dropped a request from a 2026-era upstream');
      return;
    }
    if (method === 'ping') {
      void this.respond({ jsonrpc: '2.0', id, result: {} });
      return;
    }
    const key = String(id);
    if (this.answering.has(key) || this.answering.size >= MAX_UPSTREAM_REQUESTS) {
      void this.respond(errorMessage(id, new GatewayError('UPSTREAM_BUSY', `upstream "${this.server}" has too many requests of its own open`)));
      return;
    }
    const abort = new AbortController();
    this.answering.set(key, abort);
    let pending: Promise<Params>;
    try {
      pending = this.options.onRequest({ id, method, params }, abort.signal);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => (abort.signal.aborted ? undefined : this.respond({ jsonrpc: '2.0', id, result })),
      (error: unknown) => (abort.signal.aborted ? undefined : this.respond(errorMessage(id, error))),
    ).finally(() => {
      if (this.answering.get(key) === abort) this.answering.delete(key);
    });
  }

  private respond(message: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.wire.send(message as JSONRPCMessage).catch((error: unknown) => {
      this.options.logger.debug({ code: (error as { code?: unknown }).code }, 'could not answer an upstream request');
    });
  }

  private closedByWire(): void {
    if (this.closed) return;
    this.fail();
  }

  /** The connection is gone: nothing more can arrive for any request. */
  private fail(): void {
    if (this.closed) return;
    this.closed = true;
    const error = this.closedError();
    const open = [...this.open.values()];
    this.open.clear();
    this.abandonedCount = 0;
    for (const entry of open) entry.fail?.(error);
    for (const abort of this.answering.values()) abort.abort();
    this.answering.clear();
    for (const stream of [...this.streams.values()]) stream.onEnd('remote');
    this.wake(false);
    this.options.onClose();
  }

  private wake(reusable: boolean): void {
    for (const settle of [...this.idleWaiters]) settle(reusable);
  }

  private closedError(): UpstreamError {
    return this.closeReason ?? new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed');
  }

  private cancelledError(): UpstreamError {
    return new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'request cancelled');
  }
}
