/**
 * HTTP+SSE connector, for servers that only speak the transport of MCP 2024-11-05 ("HTTP with
 * SSE", deprecated by 2025-03-26): GET the configured URL, whose first event, `endpoint`, names
 * where to POST messages; every server message arrives on that one stream. Requests go out through
 * the server's egress dispatcher with its `headers` and `envHeaders`, exactly as for Streamable
 * HTTP (`createUpstreamFetch`).
 *
 * Security: the announced endpoint must be of the SSE URL's origin, else the connection is
 * refused (`UPSTREAM_BLOCKED`) before anything is POSTed — the configured secrets would otherwise
 * go wherever the stream says, and the egress rules and `upstreamHosts` were judged on the
 * configured URL only. Errors and logs name the server, never a URL.
 *
 * Not the SDK's `SSEClientTransport`: it reconnects on its own when the stream ends (EventSource
 * semantics) and then follows the new `endpoint` event into a fresh, uninitialised upstream session
 * without reporting the cut; and it buffers an event of any size. Here a stream that ends closes
 * the transport (the link reconnects and initialises anew, see slot.ts), and no event may exceed
 * the per-message cap (policy `limits.maxUpstreamMessageBytes`): the fetch bounds every event of
 * the stream before it is parsed (net/sse-event-bound.ts), and the events are read with
 * `eventsource-parser`, as the Streamable HTTP wire reads its streams. `id` and `retry` mean
 * nothing here: an HTTP+SSE session cannot be resumed, so nothing reconnects with them.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import type { RemoteServerConfig } from '../config/schema.js';
import { findCause, UpstreamError, UpstreamHttpError } from '../errors.js';
import { discardBody } from '../net/discard-body.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import { isRpcMessage, type Wire } from './peer.js';
import { createUpstreamFetch, type HttpConnectorDeps } from './streamable-http.js';

/**
 * The stream is quiet between messages for as long as the session lives, so its GET gets no body
 * timeout (undici's default would cut a quiet stream after 5 minutes, and the upstream session
 * with it). Requests stay bounded by the link's request timeout; POSTs keep the default.
 */
const quietStreams: Dispatcher.DispatcherComposeInterceptor = (dispatch) =>
  function quietStream(options, handler) {
    return dispatch(options.method === 'GET' ? { ...options, bodyTimeout: 0 } : options, handler);
  };

export function createSseTransport(server: string, config: RemoteServerConfig, deps: HttpConnectorDeps, logger: Logger): SseClientTransport {
  const dispatcher = deps.dispatcherFor(server, config).compose(quietStreams);
  const fetch = createUpstreamFetch(server, config, deps, logger, dispatcher);
  return new SseClientTransport({ server, url: new URL(config.url), fetch, connectTimeoutMs: config.connectTimeoutMs, logger });
}

export interface SseClientTransportOptions {
  /** The server's config key: the only identifying detail errors and logs carry. */
  server: string;
  /** The SSE endpoint. */
  url: URL;
  /** The server's fetch (`createUpstreamFetch`): its egress and header rules, and its bound on each event. */
  fetch: GuardedFetch;
  /** Bounds the whole opening: the GET answered and the `endpoint` event received. */
  connectTimeoutMs: number;
  logger: Logger;
}

function isEventStream(contentType: string | null): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}

/** The client side of one HTTP+SSE session: a dumb pipe under the link's peer (peer.ts). */
export class SseClientTransport implements Wire {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private readonly options: SseClientTransportOptions;
  private readonly abort = new AbortController();
  private endpoint: URL | undefined;
  private protocolVersion: string | undefined;
  private announced: { resolve(url: URL): void; reject(error: Error): void } | undefined;
  private closed = false;

  constructor(options: SseClientTransportOptions) {
    this.options = options;
  }

  async start(): Promise<void> {
    const { server, connectTimeoutMs } = this.options;
    const endpoint = new Promise<URL>((resolve, reject) => (this.announced = { resolve, reject }));
    // It may be refused while the GET is still out; awaited below, never left unhandled.
    endpoint.catch(() => undefined);
    const timer = setTimeout(
      () => this.fail(new UpstreamError('UPSTREAM_TIMEOUT', server, 'SSE stream announced no message endpoint in time')),
      connectTimeoutMs,
    );
    try {
      const response = await this.options.fetch(this.options.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream' },
        signal: this.abort.signal,
      });
      if (response.status !== 200 || !isEventStream(response.headers.get('content-type')) || response.body === null) {
        await discardBody(response.body);
        throw new UpstreamError(
          'UPSTREAM_UNAVAILABLE',
          server,
          response.status === 200 ? 'SSE URL did not answer with an event stream' : `SSE URL answered HTTP ${response.status}`,
        );
      }
      void this.read(response.body);
      this.endpoint = await endpoint;
    } catch (error) {
      await this.close();
      throw this.abort.signal.reason instanceof UpstreamError ? this.abort.signal.reason : error;
    } finally {
      clearTimeout(timer);
      this.announced = undefined;
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const endpoint = this.endpoint;
    if (endpoint === undefined || this.closed) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'connection closed');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    const response = await this.options.fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(message), signal: this.abort.signal });
    // Its answer is "Accepted" at most; what the message causes comes on the stream.
    await discardBody(response.body);
    // No body in the message: an upstream's error page may quote anything.
    if (!response.ok) throw new UpstreamHttpError(this.options.server, response.status);
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.announced?.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'connection closed'));
    if (!this.abort.signal.aborted) this.abort.abort();
    this.onclose?.();
  }

  /** Ends the session for a reason an operator should know (logged by server and code only). */
  private fail(error: UpstreamError): void {
    if (this.closed) return;
    this.options.logger.warn({ server: this.options.server, code: error.code, reason: error.message }, 'upstream SSE stream refused');
    this.announced?.reject(error);
    this.abort.abort(error);
    this.onerror?.(error);
    void this.close();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = createParser({ onEvent: (event) => this.dispatch(event) });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      while (!this.closed) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch (error) {
      // Cut, aborted by close, or a body error: the stream is gone either way. An event over the
      // cap ends the stream with the fetch's own error: that is reported as such.
      const tooLarge = findCause(error, (value): value is UpstreamError => value instanceof UpstreamError && value.code === 'UPSTREAM_MESSAGE_TOO_LARGE');
      if (tooLarge !== undefined) this.fail(tooLarge);
    } finally {
      reader.cancel().catch(() => undefined);
    }
    this.announced?.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'SSE stream ended before announcing a message endpoint'));
    await this.close();
  }

  private dispatch(event: EventSourceMessage): void {
    if (this.closed) return;
    // An event that names no type is a `message` (WHATWG HTML, "Server-sent events").
    const type = event.event ?? 'message';
    if (type === 'endpoint') {
      this.announce(event.data);
      return;
    }
    if (type !== 'message') return; // other event types are not MCP's
    let message: unknown;
    try {
      message = JSON.parse(event.data);
    } catch {
      message = undefined;
    }
    // The JSON-RPC envelope only: params and results are the upstream's and the client's to judge.
    if (!isRpcMessage(message)) {
      this.onerror?.(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'sent an SSE message that is not JSON-RPC'));
      return;
    }
    this.onmessage?.(message);
  }

  /** The `endpoint` event: the first one names the message URL; later ones change nothing. */
  private announce(data: string): void {
    const announced = this.announced;
    if (announced === undefined || this.endpoint !== undefined) return;
    const { server, url } = this.options;
    let target: URL;
    try {
      target = new URL(data.trim(), url);
    } catch {
      this.fail(new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'SSE stream announced an invalid message endpoint'));
      return;
    }
    if (target.origin !== url.origin || target.username !== '' || target.password !== '') {
      this.fail(new UpstreamError('UPSTREAM_BLOCKED', server, 'SSE stream announced a message endpoint of another origin (refused)'));
      return;
    }
    announced.resolve(target);
  }
}
