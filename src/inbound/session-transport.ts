/**
 * The Streamable HTTP transport of one 2025-era client session, in place of the SDK's
 * `WebStandardStreamableHTTPServerTransport`: the same wire behaviour (status codes, headers,
 * priming events, event ids, polling, one standalone GET stream, `Last-Event-ID` replay), with
 * two differences:
 *
 * - **A quick call is answered with one JSON body** (session-streams.ts). The HTTP answer to a
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
import type { RequestId } from '../session/jsonrpc-id.js';
import { refusedResume } from './resume.js';
import { messageKind } from './message-kind.js';
import { cancelledRequestId } from './request-ledger.js';
import { SessionStreams } from './session-streams.js';

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
  /** Where server messages go, and the session's in-flight ids (session-streams.ts). */
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
