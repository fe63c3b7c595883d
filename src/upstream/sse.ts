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
 * `MAX_MESSAGE_BYTES`.
 */
import { SdkError, SdkErrorCode, SdkHttpError, type JSONRPCMessage } from '@modelcontextprotocol/client';
import type { Dispatcher } from 'undici';
import type { RemoteServerConfig } from '../config/schema.js';
import { UpstreamError } from '../errors.js';
import { discardBody } from '../net/discard-body.js';
import { messageTooLarge } from '../net/dispatch-hop.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import { createSseEventReader, type SseEvent } from './sse-events.js';
import { isRpcMessage, type Wire } from './peer.js';
import { createUpstreamFetch, type HttpConnectorDeps } from './streamable-http.js';

/** The default per-message cap (policy `limits.maxUpstreamMessageBytes`): the most one SSE event may hold. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

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
  return new SseClientTransport({
    server,
    url: new URL(config.url),
    fetch,
    connectTimeoutMs: config.connectTimeoutMs,
    logger,
    maxMessageBytes: deps.maxMessageBytes ?? MAX_MESSAGE_BYTES,
  });
}

export interface SseClientTransportOptions {
  /** The server's config key: the only identifying detail errors and logs carry. */
  server: string;
  /** The SSE endpoint. */
  url: URL;
  fetch: GuardedFetch;
  /** Bounds the whole opening: the GET answered and the `endpoint` event received. */
  connectTimeoutMs: number;
  logger: Logger;
  /** Largest event accepted; default `MAX_MESSAGE_BYTES`. Larger closes the transport. */
  maxMessageBytes?: number;
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
    if (endpoint === undefined || this.closed) throw new SdkError(SdkErrorCode.NotConnected, 'Not connected');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    const response = await this.options.fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(message), signal: this.abort.signal });
    // Its answer is "Accepted" at most; what the message causes comes on the stream.
    await discardBody(response.body);
    if (!response.ok) {
      // No body in the message: an upstream's error page may quote anything (the SDK's would).
      throw new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `upstream answered HTTP ${response.status}`, {
        status: response.status,
        statusText: response.statusText,
      });
    }
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.announced?.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
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
    const events = createSseEventReader(this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES);
    const reader = body.getReader();
    try {
      while (!this.closed) {
        const { done, value } = await reader.read();
        if (done) break;
        const pushed = events.push(value);
        if (!pushed.ok) {
          this.fail(messageTooLarge(this.options.server, this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES));
          break;
        }
        for (const event of pushed.events) {
          if (this.closed) break;
          this.dispatch(event);
        }
      }
    } catch (error) {
      // Cut, aborted by close, or a body error: the stream is gone either way. The fetch's own
      // bound (the same cap) may have refused an event first: that is reported as such.
      if (error instanceof UpstreamError && error.code === 'UPSTREAM_MESSAGE_TOO_LARGE') this.fail(error);
    } finally {
      reader.cancel().catch(() => undefined);
    }
    this.announced?.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'SSE stream ended before announcing a message endpoint'));
    await this.close();
  }

  private dispatch(event: SseEvent): void {
    if (event.type === 'endpoint') {
      this.announce(event.data);
      return;
    }
    if (event.type !== 'message') return; // other event types are not MCP's
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
