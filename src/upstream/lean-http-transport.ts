/**
 * The SDK's Streamable HTTP client transport with a lean path for the common exchange: a
 * 2025-era JSON-RPC request POSTed and answered with one JSON body (MCP 2025-11-25, Transports,
 * "Sending Messages to the Server"). That exchange is sent as one `Dispatcher.request()` with a
 * plain header record (the same headers the SDK and `createUpstreamFetch` would build, the
 * configured and `envHeaders` ones read per request, through the same redirect policy and egress
 * dispatcher), and its answer parsed once and checked structurally (`answer-check.ts`).
 *
 * Every other message (initialize, notifications, batches, resumption, 2026-era requests with
 * their envelope headers) goes through the SDK's `send` as before; and so does every other
 * answer to a lean request (an error status, 202, an event stream, another content type): the
 * answer already received is handed to the SDK's own `send` through the `fetch` it calls, so it
 * is judged exactly as before and the request is never sent twice.
 */
import { isInitializeRequest, isJSONRPCRequest, PROTOCOL_VERSION_META_KEY, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, TransportSendOptions } from '@modelcontextprotocol/client';
import type { BodyLimits } from '../net/bounded-body.js';
import type { HopAnswer } from '../net/dispatch-hop.js';
import { readJsonAnswer } from '../net/json-answer.js';
import { type GuardedFetch, type GuardedRequest } from '../net/guarded-fetch.js';
import { checkAnswerMessage } from './answer-check.js';

export interface LeanPost {
  server: string;
  /** The redirect policy over raw hops, on the server's egress dispatcher. */
  request: GuardedRequest;
  /** The outbound headers of one request from the ones the SDK would set (fetch's defaults added). */
  headers(sdkHeaders: Record<string, string>): Record<string, string>;
  /** Turns a raw answer into the `Response` the SDK reads (bounded, as the guarded fetch does). */
  response(url: URL, init: RequestInit, answer: HopAnswer): Promise<Response>;
  limits: BodyLimits;
}

/** A single 2025-era request other than `initialize`, sent without resumption or extra headers. */
function isLean(message: JSONRPCMessage, options: TransportSendOptions | undefined): boolean {
  if (options?.resumptionToken !== undefined || options?.headers !== undefined || options?.requestSignal !== undefined) return false;
  if (!isJSONRPCRequest(message) || isInitializeRequest(message)) return false;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return meta === undefined || meta[PROTOCOL_VERSION_META_KEY] === undefined;
}

export class LeanHttpTransport extends StreamableHTTPClientTransport {
  readonly #url: URL;
  readonly #lean: LeanPost;
  /** Answers already received for a lean request, by request body, for the SDK's `send` to read. */
  readonly #handoff: Map<string, Response>;
  readonly #closing = new AbortController();
  #protocolVersion: string | undefined;

  constructor(url: URL, fetchUpstream: GuardedFetch, lean: LeanPost) {
    const handoff = new Map<string, Response>();
    super(url, {
      fetch: (target, init) => {
        const body = init?.body;
        const handed = typeof body === 'string' ? handoff.get(body) : undefined;
        if (handed === undefined) return fetchUpstream(target, init);
        handoff.delete(body as string);
        return Promise.resolve(handed);
      },
      // Redirects are ours (same-origin only, each hop checked): tell the SDK not to add its own.
      redirectPolicy: 'follow',
    });
    this.#url = url;
    this.#lean = lean;
    this.#handoff = handoff;
  }

  override setProtocolVersion(version: string): void {
    super.setProtocolVersion(version);
    this.#protocolVersion = version;
  }

  override async close(): Promise<void> {
    this.#closing.abort(new Error('transport closed'));
    this.#handoff.clear();
    await super.close();
  }

  override async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    if (Array.isArray(message) || !isLean(message, options)) return super.send(message, options);
    const body = JSON.stringify(message);
    const signal = this.#closing.signal;
    let handed: Response;
    try {
      // What the SDK's `_send` sets for this exchange (it has no auth provider or extra init here).
      const sdkHeaders: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const sessionId = this.sessionId;
      if (sessionId) sdkHeaders['mcp-session-id'] = sessionId;
      if (this.#protocolVersion) sdkHeaders['mcp-protocol-version'] = this.#protocolVersion;
      const answer = await this.#lean.request(this.#url, { method: 'POST', headers: this.#lean.headers(sdkHeaders), body, signal });
      const bytes = await readJsonAnswer(answer, this.#lean.server, this.#lean.limits, signal);
      if (bytes !== undefined) {
        const data: unknown = JSON.parse(bytes.toString('utf8'));
        const messages = Array.isArray(data) ? data.map(checkAnswerMessage) : [checkAnswerMessage(data)];
        for (const received of messages) this.onmessage?.(received);
        return;
      }
      handed = await this.#lean.response(this.#url, { method: 'POST', body, signal }, answer);
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
    // Not a JSON body: the SDK judges it, as it would have, from the answer already received.
    this.#handoff.set(body, handed);
    try {
      await super.send(message, options);
    } finally {
      this.#handoff.delete(body);
    }
  }
}
