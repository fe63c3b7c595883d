/**
 * Where the server messages of one 2025-era Streamable HTTP session go (session-transport.ts is
 * the HTTP side): each POSTed request's answer — undecided until its first message, then one
 * JSON body (the result came first) or an SSE stream (anything else came first, or
 * `streamAfterMs` passed) — and the standalone GET stream for everything unrelated to a request.
 * Every event is stored before it is written when the session is resumable, one after another per
 * stream, in call order. It also owns the session's in-flight ids (request-ledger.ts): a request
 * is routable from its admission until its response has been stored.
 */
import { randomUUID } from 'node:crypto';
import type { EventStore, JSONRPCMessage, TransportSendOptions } from '@modelcontextprotocol/server';
import { refusal } from '../errors.js';
import { responseIdOf, type RequestId } from '../session/jsonrpc-id.js';
import { RequestLedger } from './request-ledger.js';
import { MAX_UNREAD_BYTES, SSE_HEADERS, SseWriter } from './sse-writer.js';

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
