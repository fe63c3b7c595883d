/**
 * The wire of one HTTP+SSE session (MCP 2024-11-05, "Transports: HTTP with SSE"): one SSE
 * stream, opened by the client's GET, whose first event, `endpoint`, names the URL the client
 * POSTs its messages to; every server message — responses, notifications, server→client
 * requests — follows on that stream as a `message` event, and each POST is answered 202 at once.
 *
 * A session on this wire is a 2025-era session like any other (`Session2025`: the gateway's
 * peer on it, the session's upstream connections): only the transport differs. Like every wire it
 * keeps the session's in-flight ids (request-ledger.ts): taken when a request is POSTed, freed
 * when its response goes on the stream or the client cancels it. The stream is the session: when it goes, the session is closed and its children reaped.
 * Until the client's `initialize` the session counts as idle (`openStreams` is 0), so a stream
 * that never initialises is expired like any idle session.
 */
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/server';
import { errorMessage, refusal } from '../../errors.js';
import type { SessionWire, SessionWireHooks } from '../session-2025.js';
import { messageKind } from '../message-kind.js';
import { cancelledRequestId, RequestLedger } from '../request-ledger.js';
import { responseIdOf } from '../../session/jsonrpc-id.js';
import { MAX_UNREAD_BYTES, SSE_HEADERS, SseWriter } from '../sse-writer.js';

/**
 * Unread bytes a session's stream may hold (`MAX_UNREAD_BYTES`, as every SSE answer): a client
 * that keeps POSTing calls but never reads the stream their answers go to would otherwise pile
 * them up without end (on this wire, unlike Streamable HTTP, answers do not travel on the POST's
 * own response). Past it the stream is cut and the session closed.
 */
export { MAX_UNREAD_BYTES };

export interface SseSessionTransportOptions {
  hooks: SessionWireHooks;
  /** The credential the message URL carries (`sessionId=`): random, never logged. */
  token: string;
  /** The message URL as announced: a path and query on the stream's own origin. */
  endpoint: string;
  /** Called once when the transport closes, whatever closed it. */
  onClosed(): void;
}

export class SseSessionTransport implements SessionWire {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** The session's id (what request logs carry), never the URL's token. */
  readonly sessionId: string;

  private readonly options: SseSessionTransportOptions;
  private writer: SseWriter | undefined;
  /** Requests POSTed and not yet answered on the stream. */
  private readonly inFlight = new RequestLedger<true>();
  private initialised = false;
  private closed = false;

  constructor(options: SseSessionTransportOptions) {
    this.options = options;
    this.sessionId = options.hooks.sessionId;
  }

  get openStreams(): number {
    return this.initialised && this.writer !== undefined && !this.writer.closed ? 1 : 0;
  }

  async start(): Promise<void> {}

  /** The answer to the GET: the session's one stream, the `endpoint` event first. Once. */
  open(): Response {
    if (this.writer !== undefined || this.closed) throw new Error('an HTTP+SSE session has exactly one stream');
    const writer = new SseWriter(() => this.streamGone());
    this.writer = writer;
    writer.named('endpoint', this.options.endpoint);
    writer.startKeepAlive();
    return new Response(writer.body, { status: 200, headers: SSE_HEADERS });
  }

  /**
   * One POSTed message. Only a POST that carries this session's token is served: the session sits
   * in the endpoint's registry under its id, which a Streamable HTTP request could name as
   * `Mcp-Session-Id`; that request finds nothing here.
   */
  async handleRequest(request: Request, parsedBody?: unknown): Promise<Response> {
    if (this.closed || request.method !== 'POST' || !this.presentsToken(request)) return refusal('SESSION_NOT_FOUND', 'Session not found');
    const kind = messageKind(parsedBody);
    if (kind === 'invalid') return refusal('INVALID_REQUEST', 'Invalid Request: not a JSON-RPC message');
    const message = parsedBody as JSONRPCMessage & { method?: string; id?: string | number };
    if (kind === 'request' && message.method === 'initialize') {
      if (this.initialised) return refusal('ALREADY_INITIALIZED', 'Invalid Request: Server already initialized');
      this.initialised = true;
      await this.options.hooks.onSessionInitialized(this.sessionId);
    } else if (!this.initialised) {
      return refusal('NOT_INITIALIZED', 'Bad Request: Server not initialized');
    }
    if (this.closed) return refusal('SESSION_NOT_FOUND', 'Session not found');
    if (kind === 'request') {
      const refused = this.inFlight.admit(message.id!, true);
      if (refused !== undefined) return refused;
    } else {
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined) this.inFlight.release(cancelled);
    }
    try {
      this.onmessage?.(message, { request });
    } catch (error) {
      // Never leave a request without an answer: it gets an error on the stream (through `send`,
      // which releases its id).
      this.onerror?.(error as Error);
      if (kind === 'request') {
        void this.send(errorMessage(message.id!, error) as JSONRPCMessage).catch(() => undefined);
      }
    }
    return new Response(null, { status: 202 });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const answered = responseIdOf(message);
    if (answered !== undefined) this.inFlight.release(answered);
    const writer = this.writer;
    if (this.closed || writer === undefined || writer.closed) throw new Error('the HTTP+SSE stream is closed');
    writer.event(message, undefined);
    if (writer.backlogBytes > MAX_UNREAD_BYTES) writer.abort();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writer?.close();
    this.options.onClosed();
    this.onclose?.();
  }

  /** The client went (or never read): the session ends with its stream. */
  private streamGone(): void {
    if (!this.closed) void this.options.hooks.onSessionClosed(this.sessionId);
  }

  private presentsToken(request: Request): boolean {
    return new URL(request.url).searchParams.get('sessionId') === this.options.token;
  }
}
