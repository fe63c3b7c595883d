/**
 * The gateway's own JSON-RPC peer toward one 2025-era client session, over the session's wire
 * (Streamable HTTP: session-transport.ts; HTTP+SSE: legacy-sse/). The mirror image of the
 * upstream peer (upstream/peer.ts): it answers the client's requests through the method table
 * (method-table.ts), sends the gateway's own requests and notifications to the client, and keeps
 * the ids of both directions. It parses nothing beyond the JSON-RPC envelope: the wire has judged
 * each message's kind (message-kind.ts) and admitted each request's id (request-ledger.ts).
 *
 * Client → gateway (MCP 2025-11-25, basic/lifecycle and utilities):
 * - a request is answered by the table, with the call's own sink: what an upstream sends for the
 *   call goes on the call's stream (`relatedRequestId`). `initialize` also records what the
 *   client declared (capabilities, version) for the session's sinks;
 * - `notifications/cancelled` aborts the named call; it gets no response (the wire has already
 *   ended its stream and freed its id);
 * - `notifications/roots/list_changed` is relayed to the session's upstream connections; other
 *   notifications change nothing here;
 * - a response answers a request the gateway sent (matched by id; an unknown id is dropped).
 *
 * Gateway → client: server→client requests (elicitation, sampling, roots) are numbered here,
 * answered or timed out after `CLIENT_REQUEST_TIMEOUT_MS`, and cancelled toward the client
 * (`notifications/cancelled`) when the caller gives up; at most `MAX_CLIENT_REQUESTS` wait at once.
 */
import {
  ProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/server';
import { answerError, errorMessage, GatewayError } from '../errors.js';
import { checkServerRequest } from '../rpc/client-capabilities.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { RouteScope } from '../routing/router.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import { requestKey, type RequestId } from '../session/jsonrpc-id.js';
import type { MethodTable } from './method-table.js';

/**
 * How long a server→client request may wait for the client: an elicitation waits on a person,
 * so a minute is too short. The upstream's own timeout still bounds the call.
 */
export const CLIENT_REQUEST_TIMEOUT_MS = 10 * 60_000;

/** Server→client requests waiting on the client at once; more are refused until some are answered. */
export const MAX_CLIENT_REQUESTS = 1024;

/** Client notifications relayed to a session's own upstream connections. */
const RELAYED_CLIENT_NOTIFICATIONS = new Set(['notifications/roots/list_changed']);

type Params = Record<string, unknown>;

interface Asked {
  resolve(result: Params): void;
  reject(error: unknown): void;
}

export interface ClientPeerOptions {
  /** The session's wire: a dumb pipe of JSON-RPC messages (the SDK's `Transport` shape). */
  wire: Transport;
  /** The session's 2025 method table. */
  table: MethodTable;
  /** What the gateway's `initialize` declared: notifications it did not announce are not sent. */
  capabilities: ServerCapabilities;
  /**
   * Where a request routes, asked once per request with the HTTP request it came in (each is
   * judged by the access profile of its own token), and with none for a client notification.
   */
  scopeOf(request?: Request): RouteScope;
  /** The principal that opened the session (audit lines); absent when auth is off. */
  principal?: string | undefined;
  /** The opening token's access profile (audit lines, when the scope names none). */
  access?: AccessProfile | undefined;
}

export class ClientPeer {
  private readonly options: ClientPeerOptions;
  private readonly wire: Transport;
  /** The client's requests being answered, by id: cancellation aborts the work. */
  private readonly answering = new Map<string, AbortController>();
  /** The gateway's requests waiting on the client, by the id it sent them under. */
  private readonly asked = new Map<number, Asked>();
  private nextId = 0;
  private declared: ClientCapabilities | undefined;
  private closed = false;
  /** Where session-level messages go: the session's standalone stream. */
  readonly sessionSink: DownstreamSink;

  constructor(options: ClientPeerOptions) {
    this.options = options;
    this.wire = options.wire;
    const peer = this;
    this.sessionSink = {
      canRequest: true,
      get clientCapabilities() {
        return peer.declared;
      },
      request: (message, signal) => this.ask(message, undefined, signal),
      notify: (message) => this.tell(message, undefined),
    };
  }

  /** What the client declared in its `initialize` (undefined before it). */
  get clientCapabilities(): ClientCapabilities | undefined {
    return this.declared;
  }

  async start(): Promise<void> {
    this.wire.onmessage = (message, extra) => this.receive(message, extra);
    this.wire.onclose = () => this.closedByWire();
    this.wire.onerror = () => undefined; // a request's own failure is answered on it
    this.wire.setSupportedProtocolVersions?.([...SUPPORTED_PROTOCOL_VERSIONS]);
    await this.wire.start();
  }

  /** Closes the wire; every call in flight is aborted and every request waiting on the client fails. */
  async close(): Promise<void> {
    await this.wire.close();
    this.closedByWire();
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    const m = message as { id?: RequestId; method?: unknown; params?: Params; result?: Params; error?: { code: number; message: string; data?: unknown } };
    if (typeof m.method === 'string') {
      if (m.id === undefined) this.notification(m.method, m.params);
      else void this.answer({ id: m.id, method: m.method, params: m.params }, extra);
      return;
    }
    if (typeof m.id !== 'number') return; // never one of the gateway's own ids
    const asked = this.asked.get(m.id);
    if (asked === undefined) return; // answered late, after a timeout or a cancellation
    if (m.error !== undefined) asked.reject(new ProtocolError(m.error.code, m.error.message, m.error.data));
    else asked.resolve(m.result ?? {});
  }

  private notification(method: string, params: Params | undefined): void {
    if (method === 'notifications/cancelled') {
      const id = params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.answering.get(requestKey(id))?.abort(params?.reason);
    } else if (RELAYED_CLIENT_NOTIFICATIONS.has(method)) {
      // Only what a client may say to a server is relayed, and without anything else it carried;
      // best effort, as every notification (the client's POST is answered 202 whatever happens here).
      try {
        this.options.scopeOf().broadcast?.({ method });
      } catch {
        // a scope closing under a late notification: nothing to relay to
      }
    }
  }

  private async answer(request: { id: RequestId; method: string; params: Params | undefined }, extra: MessageExtraInfo | undefined): Promise<void> {
    const key = requestKey(request.id);
    const controller = new AbortController();
    this.answering.set(key, controller);
    const http = extra?.request;
    let response: JSONRPCMessage;
    try {
      const result = await this.options.table.handle(request, {
        scope: this.options.scopeOf(http),
        signal: controller.signal,
        sink: this.callSink(request.id, controller.signal),
        headers: http?.headers,
        principal: this.options.principal,
        access: this.options.access,
        sessionId: this.wire.sessionId,
        closeSse: extra?.closeSSEStream,
      });
      // What the client declared holds for the session from its accepted `initialize` on.
      if (request.method === 'initialize') this.declared = request.params?.capabilities as ClientCapabilities;
      response = { jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage;
    } catch (error) {
      response = (error instanceof ProtocolError ? answerError(request.id, error) : errorMessage(request.id, error)) as JSONRPCMessage;
    } finally {
      if (this.answering.get(key) === controller) this.answering.delete(key);
    }
    // A cancelled request gets no response (MCP: the receiver stays silent).
    if (controller.signal.aborted || this.closed) return;
    await this.wire.send(response, { relatedRequestId: request.id }).catch(() => undefined);
  }

  /**
   * Where messages caused by one call go: that call's own stream. Once the call is cancelled, its
   * id may already be reused by a new request of the client; late messages of the old call are
   * dropped (a request is refused) so they can never reach the new call's stream.
   */
  private callSink(id: RequestId, cancelled: AbortSignal): DownstreamSink {
    const peer = this;
    return {
      canRequest: true,
      get clientCapabilities() {
        return peer.declared ?? {};
      },
      request: (message, signal) => (cancelled.aborted ? Promise.reject(new Error('the call was cancelled')) : this.ask(message, id, signal)),
      notify: (message) => (cancelled.aborted ? Promise.resolve() : this.tell(message, id)),
    };
  }

  private tell(message: RpcMessage, related: RequestId | undefined): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the session is closed'));
    if (!announced(message.method, this.options.capabilities, this.declared)) return Promise.resolve();
    const note = { jsonrpc: '2.0', method: message.method, ...(message.params === undefined ? {} : { params: message.params }) } as JSONRPCMessage;
    return this.wire.send(note, related === undefined ? undefined : { relatedRequestId: related });
  }

  /** A server→client request on the call's stream (`related`) or the session's. */
  private ask(message: RpcMessage, related: RequestId | undefined, signal: AbortSignal | undefined): Promise<Params> {
    if (this.closed) return Promise.reject(new Error('the session is closed'));
    if (this.asked.size >= MAX_CLIENT_REQUESTS) return Promise.reject(new Error('too many requests waiting on the client'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Only what the client declared it answers (MCP 2025-11-25: sampling, elicitation, roots).
    const allowed = checkServerRequest(this.declared, message.method, message.params);
    if (!allowed.ok) return Promise.reject(new GatewayError(allowed.code, allowed.message));
    const id = this.nextId++;
    const sendOptions = related === undefined ? undefined : { relatedRequestId: related };
    return new Promise<Params>((resolve, reject) => {
      const settle = () => {
        this.asked.delete(id);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      // The caller gave up: the client is told, so it stops asking its user.
      const giveUp = (reason: unknown) => {
        settle();
        const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } } as JSONRPCMessage;
        void this.wire.send(cancel, sendOptions).catch(() => undefined);
        reject(reason);
      };
      const onAbort = () => giveUp(signal?.reason);
      const timer = setTimeout(() => giveUp(new Error(`the client did not answer ${message.method} within ${CLIENT_REQUEST_TIMEOUT_MS} ms`)), CLIENT_REQUEST_TIMEOUT_MS);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.asked.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      const request = { jsonrpc: '2.0', id, method: message.method, ...(message.params === undefined ? {} : { params: message.params }) } as JSONRPCMessage;
      this.wire.send(request, sendOptions).catch((error: unknown) => this.asked.get(id)?.reject(error));
    });
  }

  private closedByWire(): void {
    if (this.closed) return;
    this.closed = true;
    const gone = new Error('the session is closed');
    for (const controller of this.answering.values()) controller.abort(gone);
    this.answering.clear();
    for (const asked of [...this.asked.values()]) asked.reject(gone);
  }
}

/**
 * Whether the gateway may send notification `method` to this client: the ones tied to a
 * capability only when its `initialize` declared it (MCP 2025-11-25: logging, resources, tools,
 * prompts), URL elicitation's completion only to a client that declared URL elicitation. One
 * not announced is dropped.
 */
export function announced(method: string, capabilities: ServerCapabilities, client: ClientCapabilities | undefined): boolean {
  switch (method) {
    case 'notifications/message':
      return Boolean(capabilities.logging);
    case 'notifications/resources/updated':
    case 'notifications/resources/list_changed':
      return Boolean(capabilities.resources);
    case 'notifications/tools/list_changed':
      return Boolean(capabilities.tools);
    case 'notifications/prompts/list_changed':
      return Boolean(capabilities.prompts);
    case 'notifications/elicitation/complete':
      return Boolean((client?.elicitation as { url?: unknown } | undefined)?.url);
    default:
      return true;
  }
}
