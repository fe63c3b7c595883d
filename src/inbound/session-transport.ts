/**
 * The Streamable HTTP transport of one 2025-era client session, in place of the SDK's
 * `WebStandardStreamableHTTPServerTransport`: the same wire behaviour (status codes, headers,
 * priming events, event ids, polling, one standalone GET stream, `Last-Event-ID` replay), with
 * two differences:
 *
 * - **A quick call is answered with one JSON body** (`SessionStreams` below). The HTTP answer to a
 *   POSTed request is held until the call produces its first message. If that is the result, it goes out as
 *   `application/json`; if the call first sends a notification or a request, is told to close its
 *   stream (polling), or is still running after `streamAfterMs`, the answer becomes an SSE
 *   stream, resumable from its priming event like the SDK's. (docs/performance.md, "Where the time
 *   goes": answering every call as a stream — headers flushed before the result, chunked
 *   writes, stream plumbing, a priming event stored per call — costs more than anything else
 *   the gateway controls. The spec lets a
 *   server answer a POST with either type.)
 * - **A resumed stream is attached before its history is read.** Events stored during the
 *   replay wait in a buffer and follow it, minus the ids it already sent: nothing is lost or sent
 *   twice (the SDK reads first and attaches after, which lost events with a slow store).
 */
import { randomUUID } from 'node:crypto';
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  type EventStore,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { errorMessage, refusal } from '../errors.js';
import { ResumeRefused, resumeProblem, type RefusedPoint } from '../session/event-id.js';
import { responseIdOf, type RequestId } from '../session/jsonrpc-id.js';
import { refusedResume } from './resume.js';
import { messageKind } from './message-kind.js';
import { cancelledRequestId, RequestLedger } from './request-ledger.js';
import { MAX_UNREAD_BYTES, SSE_HEADERS, SseWriter } from './sse-writer.js';

export interface SessionTransportOptions {
  /** The session id, handed out when `initialize` arrives. */
  sessionId: string;
  /** Keeps SSE events for `Last-Event-ID` resumption; absent: streams are not resumable. */
  eventStore?: EventStore;
  /** SSE `retry:` (ms) sent in priming events. */
  retryIntervalMs?: number;
  /** A call unanswered after this long gets a resumable SSE stream; 0: every call streams. */
  streamAfterMs: number;
  onSessionInitialized(sessionId: string): void | Promise<void>;
  onSessionClosed(sessionId: string): void | Promise<void>;
}

export class SessionHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  sessionId: string | undefined;

  private readonly options: SessionTransportOptions;
  /** Where server messages go, and the session's in-flight ids (`SessionStreams` below). */
  private readonly streams: SessionStreams;
  private supportedVersions: readonly string[] = [];
  private initialised = false;
  private closed = false;

  constructor(options: SessionTransportOptions) {
    this.options = options;
    this.streams = new SessionStreams({
      sessionId: options.sessionId,
      ...(options.eventStore === undefined ? {} : { eventStore: options.eventStore }),
      ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
      streamAfterMs: options.streamAfterMs,
      supportedVersions: () => this.supportedVersions,
    });
  }

  /** SSE responses open right now (a session with one is not idle). */
  get openStreams(): number {
    return this.streams.openStreams;
  }

  async start(): Promise<void> {}

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = versions;
  }

  async handleRequest(request: Request, parsedBody?: unknown): Promise<Response> {
    if (this.closed) return refusal('SESSION_NOT_FOUND', 'Session not found');
    switch (request.method) {
      case 'POST':
        return this.post(request, parsedBody);
      case 'GET':
        return this.get(request);
      case 'DELETE':
        return this.delete(request);
      default:
        return refusal('METHOD_NOT_ALLOWED', 'Method not allowed.', { headers: { allow: 'GET, POST, DELETE' } });
    }
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.streams.send(message, options);
  }

  /** Closes a request's SSE stream, the call going on (polling: the client resumes with Last-Event-ID). */
  closeSSEStream(requestId: RequestId): void {
    this.streams.closeSSEStream(requestId);
  }

  /** A request the client cancelled gets no response: its stream is ended and forgotten. */
  endCancelled(requestId: RequestId): void {
    this.streams.endCancelled(requestId);
  }

  closeStandaloneSSEStream(): void {
    this.streams.closeStandaloneSSEStream();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.streams.closeAll();
    this.onclose?.();
  }

  private async post(request: Request, body: unknown): Promise<Response> {
    const accept = request.headers.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refusal('NOT_ACCEPTABLE', 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    const kind = messageKind(body);
    if (kind === 'invalid') return refusal('INVALID_REQUEST', 'Invalid Request: not a JSON-RPC message');
    const message = body as JSONRPCMessage & { method?: string; params?: { protocolVersion?: unknown } };
    const initialize = kind === 'request' && message.method === 'initialize';
    if (initialize) {
      if (this.initialised) return refusal('ALREADY_INITIALIZED', 'Invalid Request: Server already initialized');
      this.initialised = true;
      this.sessionId = this.options.sessionId;
      await this.options.onSessionInitialized(this.sessionId);
    } else {
      const refused = this.validateSession(request) ?? this.validateProtocolVersion(request);
      if (refused !== undefined) return refused;
    }
    if (this.closed) return refusal('SESSION_NOT_FOUND', 'Session not found');
    if (kind !== 'request') {
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined) this.streams.endCancelled(cancelled);
      this.onmessage?.(message, { request });
      return new Response(null, { status: 202 });
    }
    const version = initialize
      ? String(message.params?.protocolVersion)
      : (request.headers.get('mcp-protocol-version') ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION);
    const requestId = (message as { id: RequestId }).id;
    return new Promise<Response>((resolve) => {
      const refused = this.streams.admit(requestId, version, resolve);
      if (refused !== undefined) return resolve(refused);
      const resumable = this.streams.resumable(version);
      try {
        this.onmessage?.(message, {
          request,
          ...(resumable
            ? { closeSSEStream: () => this.closeSSEStream(requestId), closeStandaloneSSEStream: () => this.closeStandaloneSSEStream() }
            : {}),
        });
      } catch (error) {
        // Never leave the client waiting on a request nothing will answer: it gets an error
        // response, as JSON or on its stream after what was already sent, through `send` (which
        // releases the id).
        this.onerror?.(error as Error);
        void this.send(errorMessage(requestId, error) as JSONRPCMessage).catch(() => undefined);
      }
    });
  }

  private async get(request: Request): Promise<Response> {
    if (!(request.headers.get('accept') ?? '').includes('text/event-stream')) {
      return refusal('NOT_ACCEPTABLE', 'Not Acceptable: Client must accept text/event-stream');
    }
    const refused = this.validateSession(request) ?? this.validateProtocolVersion(request);
    if (refused !== undefined) return refused;
    const lastEventId = request.headers.get('last-event-id');
    if (lastEventId && this.options.eventStore !== undefined) return this.resume(lastEventId, this.options.eventStore);
    if (this.streams.standalone !== undefined) {
      return refusal('STREAM_CONFLICT', 'Conflict: Only one SSE stream is allowed per session');
    }
    return this.streams.sseResponse(this.streams.openStandalone());
  }

  private async delete(request: Request): Promise<Response> {
    const refused = this.validateSession(request) ?? this.validateProtocolVersion(request);
    if (refused !== undefined) return refused;
    try {
      await this.options.onSessionClosed(this.options.sessionId);
      return new Response(null, { status: 200 });
    } finally {
      await this.close();
    }
  }

  /**
   * A GET with `Last-Event-ID` (the caller has checked the id is a sound resume point): the new
   * connection is attached first, then the history after the id is replayed into it; a stream
   * whose request has been answered (or that this replica never served) ends after the replay.
   */
  private async resume(lastEventId: string, store: EventStore): Promise<Response> {
    const streamId = await store.getStreamIdForEventId?.(lastEventId);
    if (streamId === undefined) return refusal('RESUME_REFUSED', 'Invalid event ID format');
    const resumed = this.streams.attachResume(streamId);
    if (resumed === 'conflict') return refusal('STREAM_CONFLICT', 'Conflict: Stream already has an active connection');
    const { writer, attached } = resumed;
    try {
      await store.replayEventsAfter(lastEventId, { send: async (id, message) => writer.replay(id, message) });
    } catch (error) {
      // Nothing replayed has reached the client yet: the replay is answered as the resume check
      // would have answered it had it seen the store's state — evicted meanwhile (410) or the
      // store failing (503) — never as a bare 500.
      writer.endReplay();
      writer.close();
      const point: RefusedPoint = error instanceof ResumeRefused ? error.point : (resumeProblem('unavailable') as RefusedPoint);
      return refusedResume(point);
    }
    if (this.closed) {
      writer.endReplay();
      writer.close();
      return refusal('SESSION_NOT_FOUND', 'Session not found');
    }
    writer.endReplay();
    // An attached stream ends when its response has been written (send closes it then).
    if (!attached) writer.close();
    else writer.startKeepAlive();
    return this.streams.sseResponse(writer);
  }

  private validateSession(request: Request): Response | undefined {
    if (!this.initialised) return refusal('NOT_INITIALIZED', 'Bad Request: Server not initialized');
    const presented = request.headers.get('mcp-session-id');
    if (!presented) return refusal('SESSION_ID_REQUIRED', 'Bad Request: Mcp-Session-Id header is required');
    if (presented !== this.sessionId) return refusal('SESSION_NOT_FOUND', 'Session not found');
    return undefined;
  }

  private validateProtocolVersion(request: Request): Response | undefined {
    const version = request.headers.get('mcp-protocol-version');
    if (version === null || this.supportedVersions.includes(version)) return undefined;
    return refusal(
      'UNSUPPORTED_PROTOCOL_VERSION',
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${this.supportedVersions.join(', ')})`,
    );
  }
}

/*
 * The session's streams: where the server messages of one 2025-era Streamable HTTP session go
 * (the transport above is the HTTP side): each POSTed request's answer — undecided until its first message, then one
 * JSON body (the result came first) or an SSE stream (anything else came first, or
 * `streamAfterMs` passed) — and the standalone GET stream for everything unrelated to a request.
 * Every event is stored before it is written when the session is resumable, one after another per
 * stream, in call order. It also owns the session's in-flight ids (request-ledger.ts): a request
 * is routable from its admission until its response has been stored.
 */

/** The stream id of the standalone GET stream (the SDK's, kept: stored event ids carry it). */
export const STANDALONE = '_GET_stream';

/** One POSTed request, from its arrival until its response has been sent. */
export interface Exchange {
  readonly requestId: RequestId;
  readonly streamId: string;
  readonly protocolVersion: string;
  /** Set while the HTTP answer is undecided (no message yet, not streaming). */
  respond: ((response: Response) => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The stream's live connection (the POST's own response, or a resumed GET). */
  writer: SseWriter | undefined;
  /** Stores and writes this stream's events one after another, in call order. */
  chain: Promise<void>;
}

export interface SessionStreamsOptions {
  sessionId: string;
  /** Keeps SSE events for `Last-Event-ID` resumption; absent: streams are not resumable. */
  eventStore?: EventStore;
  /** SSE `retry:` (ms) sent in priming events. */
  retryIntervalMs?: number;
  /** A call unanswered after this long gets a resumable SSE stream; 0: every call streams. */
  streamAfterMs: number;
  /** The protocol versions the server supports (set once the server connects). */
  supportedVersions(): readonly string[];
}

export class SessionStreams {
  private readonly options: SessionStreamsOptions;
  /** The session's requests in flight: the one ledger of its ids. */
  private readonly exchanges = new RequestLedger<Exchange>();
  private standaloneWriter: SseWriter | undefined;
  private standaloneChain: Promise<void> = Promise.resolve();
  /** Every SSE answer still open, whatever its request's state, so `closeAll` ends them all. */
  private readonly writers = new Set<SseWriter>();

  constructor(options: SessionStreamsOptions) {
    this.options = options;
  }

  /** SSE responses open right now. */
  get openStreams(): number {
    return this.writers.size;
  }

  get standalone(): SseWriter | undefined {
    return this.standaloneWriter;
  }

  /**
   * Takes a POSTed request's id and starts the clock on its undecided answer; `respond` gets the
   * HTTP answer when it is decided. A refusal (duplicate id, too many in flight) instead.
   */
  admit(requestId: RequestId, protocolVersion: string, respond: (response: Response) => void): Response | undefined {
    const exchange: Exchange = {
      requestId,
      streamId: randomUUID(),
      protocolVersion,
      respond: undefined,
      timer: undefined,
      writer: undefined,
      chain: Promise.resolve(),
    };
    const refused = this.exchanges.admit(requestId, exchange);
    if (refused !== undefined) return refused;
    exchange.respond = respond;
    if (this.options.streamAfterMs === 0) this.upgrade(exchange);
    else {
      exchange.timer = setTimeout(() => this.upgrade(exchange), this.options.streamAfterMs);
      exchange.timer.unref();
    }
    return undefined;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answered = responseIdOf(message);
    const isResponse = answered !== undefined || 'error' in message || 'result' in message;
    const requestId = isResponse ? answered : options?.relatedRequestId;
    if (requestId === undefined) {
      if (isResponse) throw new Error('Cannot send a response on a standalone SSE stream unless resuming a previous client request');
      return this.sendStandalone(message);
    }
    const exchange = this.exchanges.get(requestId);
    if (exchange === undefined) throw new Error(`No connection established for request ID: ${String(requestId)}`);
    if (isResponse && exchange.respond !== undefined) {
      // The common case: the result is the call's only message. One JSON body, no stream.
      const respond = exchange.respond;
      this.finish(exchange);
      respond(this.jsonResponse(message));
      return;
    }
    this.upgrade(exchange);
    const store = this.options.eventStore;
    const step = exchange.chain.then(async () => {
      const id = store === undefined ? undefined : await store.storeEvent(exchange.streamId, message);
      deliver(exchange.writer, message, id);
    });
    exchange.chain = step.catch(() => undefined);
    if (isResponse) {
      // Routable until its response is stored: a resume attaching meanwhile still gets it.
      void exchange.chain.then(() => {
        this.forget(exchange);
        exchange.writer?.close();
      });
    }
    return step;
  }

  /** Closes a request's SSE stream, the call going on (polling: the client resumes with Last-Event-ID). */
  closeSSEStream(requestId: RequestId): void {
    const exchange = this.exchanges.get(requestId);
    if (exchange === undefined) return;
    this.upgrade(exchange);
    // The connection open now, not one a resume attaches before the queue gets here.
    const writer = exchange.writer;
    void exchange.chain.then(() => writer?.close());
  }

  /** A request the client cancelled gets no response: its stream is ended and its id forgotten. */
  endCancelled(requestId: RequestId): void {
    const exchange = this.exchanges.get(requestId);
    if (exchange === undefined) return;
    this.closeSSEStream(requestId);
    this.forget(exchange);
  }

  closeStandaloneSSEStream(): void {
    this.standaloneWriter?.close();
  }

  /** The standalone GET stream, opened (the caller checked there is none). */
  openStandalone(): SseWriter {
    const writer = this.newWriter((gone) => {
      if (this.standaloneWriter === gone) this.standaloneWriter = undefined;
    });
    this.standaloneWriter = writer;
    writer.startKeepAlive();
    return writer;
  }

  /**
   * A resumed GET's connection for `streamId`, attached before its history is replayed (events
   * stored meanwhile wait in its buffer). `attached` is false for a stream nothing is answered on
   * any more (its request was answered, or this replica never served it): it ends after the replay.
   * `conflict` when the stream has a connection already.
   */
  attachResume(streamId: string): { writer: SseWriter; attached: boolean } | 'conflict' {
    const exchange = this.exchangeOfStream(streamId);
    const current = streamId === STANDALONE ? this.standaloneWriter : exchange?.writer;
    if (current !== undefined) return 'conflict';
    const writer = this.newWriter((gone) => {
      if (streamId === STANDALONE && this.standaloneWriter === gone) this.standaloneWriter = undefined;
      else if (exchange !== undefined && exchange.writer === gone) exchange.writer = undefined;
    });
    writer.beginReplay();
    if (streamId === STANDALONE) this.standaloneWriter = writer;
    else if (exchange !== undefined) exchange.writer = writer;
    return { writer, attached: streamId === STANDALONE || exchange !== undefined };
  }

  /** Answers every undecided request 404 and ends every stream, those still storing their response included. */
  closeAll(): void {
    for (const exchange of this.exchanges.values()) {
      const respond = exchange.respond;
      this.finish(exchange);
      respond?.(refusal('SESSION_NOT_FOUND', 'Session not found'));
    }
    for (const writer of [...this.writers]) writer.close();
  }

  /** Priming events (empty `data:`) need a client of 2025-11-25 or later (SDK rule). */
  resumable(version: string): boolean {
    return this.options.eventStore !== undefined && this.options.supportedVersions().includes(version) && version >= '2025-11-25';
  }

  sseResponse(writer: SseWriter): Response {
    return new Response(writer.body, { status: 200, headers: { ...SSE_HEADERS, 'mcp-session-id': this.options.sessionId } });
  }

  private sendStandalone(message: JSONRPCMessage): Promise<void> {
    const store = this.options.eventStore;
    const step = this.standaloneChain.then(async () => {
      const id = store === undefined ? undefined : await store.storeEvent(STANDALONE, message);
      deliver(this.standaloneWriter, message, id);
    });
    this.standaloneChain = step.catch(() => undefined);
    return step;
  }

  /** Turns an undecided answer into an SSE stream (priming event first when resumable). */
  private upgrade(exchange: Exchange): void {
    const respond = exchange.respond;
    if (respond === undefined) return;
    exchange.respond = undefined;
    if (exchange.timer !== undefined) clearTimeout(exchange.timer);
    const writer = this.newWriter((gone) => {
      if (exchange.writer === gone) exchange.writer = undefined;
    });
    exchange.writer = writer;
    const store = this.options.eventStore;
    if (store !== undefined && this.resumable(exchange.protocolVersion)) {
      exchange.chain = exchange.chain
        .then(async () => writer.priming(await store.storeEvent(exchange.streamId, {} as JSONRPCMessage), this.options.retryIntervalMs))
        .catch(() => undefined);
    }
    writer.startKeepAlive();
    respond(this.sseResponse(writer));
  }

  /** The response is out: the request is no longer routable (its stream may still be draining). */
  private finish(exchange: Exchange): void {
    exchange.respond = undefined;
    if (exchange.timer !== undefined) clearTimeout(exchange.timer);
    this.forget(exchange);
  }

  private forget(exchange: Exchange): void {
    this.exchanges.release(exchange.requestId, exchange);
  }

  /** The open request answered on `streamId` (a linear walk: resumes are rare, exchanges few). */
  private exchangeOfStream(streamId: string): Exchange | undefined {
    for (const exchange of this.exchanges.values()) if (exchange.streamId === streamId) return exchange;
    return undefined;
  }

  private newWriter(onGone: (writer: SseWriter) => void): SseWriter {
    const writer = new SseWriter((gone) => {
      this.writers.delete(gone);
      onGone(gone);
    });
    this.writers.add(writer);
    return writer;
  }

  private jsonResponse(message: JSONRPCMessage): Response {
    return new Response(JSON.stringify(message), {
      status: 200,
      headers: { 'content-type': 'application/json', 'mcp-session-id': this.options.sessionId },
    });
  }
}

/**
 * Writes one event to an open stream, cutting the stream when its client has left more than
 * `MAX_UNREAD_BYTES` unread: a client that never reads must not make the gateway hold a chatty
 * upstream's output without end. The events are in the history (when resumable), so a client
 * that does read resumes from its last event id and loses nothing still retained.
 */
function deliver(writer: SseWriter | undefined, message: JSONRPCMessage, id: string | undefined): void {
  if (writer === undefined) return;
  writer.event(message, id);
  if (writer.backlogBytes > MAX_UNREAD_BYTES) writer.abort();
}
