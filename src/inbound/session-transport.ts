/**
 * The Streamable HTTP transport of one 2025-era client session, in place of the SDK's
 * `WebStandardStreamableHTTPServerTransport`: the same wire behaviour (status codes, headers,
 * priming events, event ids, polling, one standalone GET stream, `Last-Event-ID` replay), with
 * two differences:
 *
 * - **A quick call is answered with one JSON body.** The HTTP answer to a POSTed request is
 *   held until the call produces its first message. If that is the result, it goes out as
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

/** The stream id of the standalone GET stream (the SDK's, kept: stored event ids carry it). */
const STANDALONE = '_GET_stream';

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

/** One POSTed request, from its arrival until its response has been sent. */
interface Exchange {
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

export class SessionHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  sessionId: string | undefined;

  private readonly options: SessionTransportOptions;
  /** The session's requests in flight: the one ledger of its ids (request-ledger.ts). */
  private readonly exchanges = new RequestLedger<Exchange>();
  private standalone: SseWriter | undefined;
  private standaloneChain: Promise<void> = Promise.resolve();
  private supportedVersions: readonly string[] = [];
  private initialised = false;
  private closed = false;
  /** Every SSE answer still open, whatever its request's state, so `close` ends them all. */
  private readonly writers = new Set<SseWriter>();

  constructor(options: SessionTransportOptions) {
    this.options = options;
  }

  /** SSE responses open right now (a session with one is not idle). */
  get openStreams(): number {
    return this.writers.size;
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
      if (cancelled !== undefined) this.endCancelled(cancelled);
      this.onmessage?.(message, { request });
      return new Response(null, { status: 202 });
    }
    const version = initialize
      ? String(message.params?.protocolVersion)
      : (request.headers.get('mcp-protocol-version') ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION);
    const requestId = (message as { id: RequestId }).id;
    const exchange: Exchange = {
      requestId,
      streamId: randomUUID(),
      protocolVersion: version,
      respond: undefined,
      timer: undefined,
      writer: undefined,
      chain: Promise.resolve(),
    };
    const refused = this.exchanges.admit(requestId, exchange);
    if (refused !== undefined) return refused;
    const answer = new Promise<Response>((resolve) => {
      exchange.respond = resolve;
      if (this.options.streamAfterMs === 0) this.upgrade(exchange);
      else {
        exchange.timer = setTimeout(() => this.upgrade(exchange), this.options.streamAfterMs);
        exchange.timer.unref();
      }
      const resumable = this.resumable(version);
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
    return answer;
  }

  private async get(request: Request): Promise<Response> {
    if (!(request.headers.get('accept') ?? '').includes('text/event-stream')) {
      return refusal('NOT_ACCEPTABLE', 'Not Acceptable: Client must accept text/event-stream');
    }
    const refused = this.validateSession(request) ?? this.validateProtocolVersion(request);
    if (refused !== undefined) return refused;
    const lastEventId = request.headers.get('last-event-id');
    if (lastEventId && this.options.eventStore !== undefined) return this.resume(lastEventId, this.options.eventStore);
    if (this.standalone !== undefined) {
      return refusal('STREAM_CONFLICT', 'Conflict: Only one SSE stream is allowed per session');
    }
    const writer = this.newWriter((gone) => {
      if (this.standalone === gone) this.standalone = undefined;
    });
    this.standalone = writer;
    writer.startKeepAlive();
    return this.sseResponse(writer);
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
    const exchange = this.exchangeOfStream(streamId);
    const current = streamId === STANDALONE ? this.standalone : exchange?.writer;
    if (current !== undefined) {
      return refusal('STREAM_CONFLICT', 'Conflict: Stream already has an active connection');
    }
    const writer = this.newWriter((gone) => {
      if (streamId === STANDALONE && this.standalone === gone) this.standalone = undefined;
      else if (exchange !== undefined && exchange.writer === gone) exchange.writer = undefined;
    });
    writer.beginReplay();
    const attached = streamId === STANDALONE || exchange !== undefined;
    if (streamId === STANDALONE) this.standalone = writer;
    else if (exchange !== undefined) exchange.writer = writer;
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
    return this.sseResponse(writer);
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

  /** A request the client cancelled gets no response: its stream is ended and forgotten. */
  endCancelled(requestId: RequestId): void {
    const exchange = this.exchanges.get(requestId);
    if (exchange === undefined) return;
    this.closeSSEStream(requestId);
    this.forget(exchange);
  }

  closeStandaloneSSEStream(): void {
    this.standalone?.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exchange of this.exchanges.values()) {
      const respond = exchange.respond;
      this.finish(exchange);
      respond?.(refusal('SESSION_NOT_FOUND', 'Session not found'));
    }
    // Every stream, including those of requests answered but still draining to their store.
    for (const writer of [...this.writers]) writer.close();
    this.onclose?.();
  }

  private sendStandalone(message: JSONRPCMessage): Promise<void> {
    const store = this.options.eventStore;
    const step = this.standaloneChain.then(async () => {
      const id = store === undefined ? undefined : await store.storeEvent(STANDALONE, message);
      deliver(this.standalone, message, id);
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

  /** Priming events (empty `data:`) need a client of 2025-11-25 or later (SDK rule). */
  private resumable(version: string): boolean {
    return this.options.eventStore !== undefined && this.supportedVersions.includes(version) && version >= '2025-11-25';
  }

  private sseResponse(writer: SseWriter): Response {
    return new Response(writer.body, { status: 200, headers: { ...SSE_HEADERS, 'mcp-session-id': this.options.sessionId } });
  }

  private jsonResponse(message: JSONRPCMessage): Response {
    return new Response(JSON.stringify(message), {
      status: 200,
      headers: { 'content-type': 'application/json', 'mcp-session-id': this.options.sessionId },
    });
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
