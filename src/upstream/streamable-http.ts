/**
 * The Streamable HTTP wire of the gateway's own (MCP 2025-11-25 and 2026-07-28, Transports,
 * "Streamable HTTP"): every message is one POST sent with undici's `Dispatcher.request()` on the
 * server's egress dispatcher; its answer is read as what it is — one JSON body (read whole, up to
 * the message cap, and handed up with no schema parse), an event stream (read with
 * `eventsource-parser`, each event bounded), or 202 — and a 2025 session's standalone GET stream
 * carries what the server sends outside any request.
 *
 * Each request's headers are rebuilt from an allowlist of protocol headers plus the configured
 * `headers` and `envHeaders` (read when each request is built, so a rotated secret is picked up
 * without a restart) and, for a server with `upstreamAuth`, the gateway's own token; redirects are
 * followed same-origin only, each hop checked (src/net). A 401/403 that asks for authorization
 * (naming protected resource metadata) fails as `UpstreamAuthRequired` (auth-required.ts). An
 * answer or event over `maxMessageBytes` fails its call with `UPSTREAM_MESSAGE_TOO_LARGE` naming
 * the server, and the connection is reset; an error body is read up to 64 KiB. Inside a traced
 * call, the `traceparent` (and `tracestate`) of its client span is added (observability/tracing.ts).
 */
import { PROTOCOL_VERSION_META_KEY, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { createParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import type { RemoteServerConfig } from '../config/schema.js';
import { DEFAULT_BODY_LIMITS, type BodyLimits } from '../net/bounded-body.js';
import { answerAsResponse, headerValue, withFetchDefaults, type HopAnswer } from '../net/dispatch-hop.js';
import { createGuardedFetch, createGuardedRequest, type GuardedFetch, type GuardedRequest } from '../net/guarded-fetch.js';
import { readJsonAnswer } from '../net/json-answer.js';
import { isEventStreamContentType } from '../net/media-type.js';
import type { Logger } from '../observability/logger.js';
import { compileOutboundHeaders } from '../policy/outbound-headers.js';
import { authRefusal, authRequiredIn, type AuthChallengeOptions, type UpstreamAuthRequired } from './auth-required.js';
import type { UpstreamTokenSource } from './credentials/token-source.js';
import { outsideAnyRequest } from './credentials/subject-tokens.js';
import type { CredentialOwner } from './credentials/credential-owner.js';
import { oversizedAnswers } from './oversized-answer.js';
import { currentUpstreamHeaders } from '../observability/tracing.js';
import { findCause, httpStatusOf, UpstreamError, UpstreamHttpError } from '../errors.js';
import { classifyInbound, isRpcMessage, type Wire, type WireSendOptions } from './peer.js';
import { mcpNameField } from '../rpc/standard-headers.js';

export interface HttpConnectorDeps {
  /** The egress dispatcher for this server (one per server: the guard is per-server policy). */
  dispatcherFor(server: string, config: RemoteServerConfig): Dispatcher;
  /** Reads an environment variable by name (the config layer owns process.env). */
  readEnv(name: string): string | undefined;
  /** Environment variable names the policy lets `envHeaders` read now (a reload may change them); absent: any. */
  allowedEnvNames?(): readonly string[];
  /** The most one upstream message may hold (policy `limits.maxUpstreamMessageBytes`); default 16 MiB. */
  maxMessageBytes?: number;
  /** The gateway's own credentials for a server with `upstreamAuth` (upstream/credentials/). */
  tokenSourceFor?(server: string, config: RemoteServerConfig, owner: CredentialOwner | undefined): UpstreamTokenSource | undefined;
  /** Whose connection this is (credential-owner.ts); absent on connections no caller owns. */
  credentialOwner?: CredentialOwner | undefined;
}

/** Where a request's token is read: in its call's context, or outside any for a GET. */
type Context = <T>(work: () => T) => T;

/**
 * A GET is the connection's own stream, not a call: a per-principal token is the principal's
 * latest, not that of the request during which the stream happened to open (subject-tokens.ts).
 */
function contextOf(method: string | undefined): Context {
  return method === 'GET' ? outsideAnyRequest : (work) => work();
}

/** Bodies read only for an error message (an error status, an unexpected type) are cut here. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** One HTTP exchange as the upstream kinds send it: every header and credential rule applied. */
export interface UpstreamExchange {
  (url: URL, init: { method: 'GET' | 'POST' | 'DELETE'; headers: Record<string, string>; body: string | null; signal: AbortSignal }): Promise<HopAnswer>;
}

interface UpstreamHttp {
  /** A `fetch` with the same rules, for the HTTP+SSE kind (sse.ts). */
  fetch: GuardedFetch;
  exchange: UpstreamExchange;
  /** The answer as a WHATWG `Response`, body bounded (an event stream's events too). */
  response(url: URL, method: string, body: string | null, signal: AbortSignal, answer: HopAnswer): Promise<Response>;
  limits: BodyLimits;
}

/**
 * What every HTTP upstream kind sends through: the request's headers rebuilt from what the
 * transport set plus `headers` and `envHeaders`, then the redirect policy over the server's egress
 * dispatcher (`dispatcher`, default `deps.dispatcherFor`). A 401/403 that asks for authorization
 * (naming protected resource metadata) rejects with `UpstreamAuthRequired` (auth-required.ts).
 */
function createUpstreamHttp(server: string, config: RemoteServerConfig, deps: HttpConnectorDeps, logger: Logger, dispatcher: Dispatcher): UpstreamHttp {
  const outbound = compileOutboundHeaders({
    headers: config.headers,
    envHeaders: config.envHeaders,
    ...(config.envReferences === undefined ? {} : { templates: config.envReferences.headers }),
    allowedEnvNames: deps.allowedEnvNames?.(),
  });
  const maxMessageBytes = deps.maxMessageBytes ?? DEFAULT_BODY_LIMITS.maxMessageBytes;
  const limits = { maxMessageBytes, maxOtherBodyBytes: MAX_ERROR_BODY_BYTES };
  const oversizedEvent = (body: RequestInit['body']) => oversizedAnswers(server, maxMessageBytes, body);
  const guardOptions = { server, dispatcher, logger, limits, oversizedEvent };
  const request: GuardedRequest = createGuardedRequest(guardOptions);
  const reported = new Set<string>();
  const tokens = deps.tokenSourceFor?.(server, config, deps.credentialOwner);
  const challenges: AuthChallengeOptions = { server, upstreamUrl: config.url, dispatcher, logger };
  const https = new URL(config.url).protocol === 'https:';

  const outboundHeaders = (given: Headers | Record<string, string>): Record<string, string> => {
    const built = outbound.build(given, deps.readEnv);
    for (const skip of built.skipped) {
      const key = `${skip.variable}:${skip.reason}`;
      if (reported.has(key)) continue;
      reported.add(key);
      // Names only: the value of a variable is a secret, even a malformed one.
      logger.warn({ server, header: skip.header, variable: skip.variable, reason: skip.reason }, 'upstream header skipped');
    }
    // A traced call's context (W3C Trace Context): the header beside `params._meta` (tracing.ts).
    const trace = currentUpstreamHeaders();
    if (trace !== undefined) Object.assign(built.headers, trace);
    return built.headers;
  };

  /**
   * A 401/403 answer to a request that went out with `token`: the refusal it is (auth-required.ts),
   * if it asks for authorization, and — for a 401 — the token invalidated with that refusal, so the
   * credential's owner learns why whichever request met it first (a call, or the connection's own
   * stream). The next request fetches a fresh token.
   */
  const refusalOf = async (status: number, wwwAuthenticate: string | null | undefined, token: string | undefined, context: Context) => {
    let refusal: UpstreamAuthRequired | undefined;
    try {
      refusal = await authRefusal(status, wwwAuthenticate, challenges);
      return refusal;
    } finally {
      // Also when the metadata it names cannot be read: the token was refused all the same.
      if (status === 401 && token !== undefined) context(() => tokens?.invalidate(token, refusal));
    }
  };

  const guarded = createGuardedFetch(guardOptions);
  const fetchUpstream: GuardedFetch = async function fetchUpstream(url, init) {
    const given = init?.headers;
    const headers = outboundHeaders(given instanceof Headers ? given : new Headers(given));
    const context = contextOf(init?.method);
    const token = tokens === undefined ? undefined : await context(() => tokens.token());
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const response = await guarded(url, { ...init, headers });
    if (response.status !== 401 && response.status !== 403) return response;
    const refusal = await refusalOf(response.status, response.headers.get('www-authenticate'), token, context);
    if (refusal === undefined) return response;
    await response.body?.cancel().catch(() => undefined);
    throw refusal;
  };

  const exchange: UpstreamExchange = async (url, init) => {
    const headers = withFetchDefaults(outboundHeaders(init.headers), https, null);
    const context = contextOf(init.method);
    const token = tokens === undefined ? undefined : await context(() => tokens.token());
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const answer = await request(url, { method: init.method, headers, body: init.body, signal: init.signal });
    if (answer.statusCode !== 401 && answer.statusCode !== 403) return answer;
    const refusal = await refusalOf(answer.statusCode, headerValue(answer.headers, 'www-authenticate'), token, context);
    if (refusal === undefined) return answer;
    answer.body.dump().catch(() => undefined);
    throw refusal;
  };

  return {
    fetch: fetchUpstream,
    exchange,
    response: (url, method, body, signal, answer) => answerAsResponse({ server, url, method, init: { body, signal }, limits, oversizedEvent }, answer),
    limits,
  };
}

/** The `fetch` the HTTP+SSE kind sends through (`createUpstreamHttp`). */
export function createUpstreamFetch(
  server: string,
  config: RemoteServerConfig,
  deps: HttpConnectorDeps,
  logger: Logger,
  dispatcher: Dispatcher = deps.dispatcherFor(server, config),
): GuardedFetch {
  return createUpstreamHttp(server, config, deps, logger, dispatcher).fetch;
}

export function createHttpTransport(server: string, config: RemoteServerConfig, deps: HttpConnectorDeps, logger: Logger): StreamableHttpWire {
  return new StreamableHttpWire(server, new URL(config.url), createUpstreamHttp(server, config, deps, logger, deps.dispatcherFor(server, config)), logger);
}

/** Header names the per-request `headers` may not set: the wire derives them itself. */
const RESERVED = new Set(['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id']);

/** A header value as SEP-2243 carries it: as it is when printable ASCII, else base64 in a sentinel. */
function headerSafe(value: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = value !== '' && value === value.trim() && /^[\t\x20-\x7e]*$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Standalone-stream reconnects in a row that may fail before the wire stops trying. */
const MAX_STREAM_RETRIES = 2;
const STREAM_RETRY_MS = 1_000;

interface StreamRead {
  /** The request the POST carried, whose answer the stream owes; undefined for the standalone GET. */
  requestId?: string | number | undefined;
  onRequestStreamEnd?: (() => void) | undefined;
  signal: AbortSignal;
}

export class StreamableHttpWire implements Wire {
  readonly hasPerRequestStream = true;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;

  private readonly server: string;
  private readonly url: URL;
  private readonly http: UpstreamHttp;
  private readonly logger: Logger;
  private readonly closing = new AbortController();
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private closed = false;

  constructor(server: string, url: URL, http: UpstreamHttp, logger: Logger) {
    this.server = server;
    this.url = url;
    this.http = http;
    this.logger = logger;
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async send(message: JSONRPCMessage, options: WireSendOptions = {}): Promise<void> {
    if (this.closed) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed');
    const { method, id, params } = message as { method?: unknown; id?: string | number; params?: Record<string, unknown> };
    const request = typeof method === 'string' && id !== undefined;
    const initialize = request && method === 'initialize';
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (this.sessionId !== undefined && !initialize) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    const enveloped = request ? envelopeVersion(params) : undefined;
    if (enveloped !== undefined) {
      // MCP 2026-07-28 (SEP-2243): the version, method and name are mirrored from the body.
      headers['mcp-protocol-version'] = enveloped;
      headers['mcp-method'] = method as string;
      const field = mcpNameField(method as string);
      const name = field === undefined ? undefined : params?.[field];
      if (typeof name === 'string') headers['mcp-name'] = headerSafe(name);
    }
    if (options.headers !== undefined) {
      for (const [name, value] of Object.entries(options.headers)) if (!RESERVED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    }
    const signal = options.requestSignal === undefined ? this.closing.signal : AbortSignal.any([this.closing.signal, options.requestSignal]);
    const body = JSON.stringify(message);
    const answer = await this.http.exchange(this.url, { method: 'POST', headers, body, signal });
    const status = answer.statusCode;
    if (status >= 200 && status <= 299) {
      if (initialize) this.sessionId = headerValue(answer.headers, 'mcp-session-id') || undefined;
      if (status === 202 || status === 204) {
        answer.body.dump().catch(() => undefined);
        if (method === 'notifications/initialized') this.openStandaloneStream(0, undefined);
        return;
      }
      const json = await readJsonAnswer(answer, this.server, this.http.limits, signal);
      if (json !== undefined) {
        this.deliverJson(json);
        return;
      }
    }
    const response = await this.http.response(this.url, 'POST', body, signal, answer);
    if (response.ok) {
      if (request && isEventStreamContentType(response.headers.get('content-type')) && response.body !== null) {
        void this.readStream(response.body, { requestId: id, onRequestStreamEnd: options.onRequestStreamEnd, signal });
        return;
      }
      await response.body?.cancel().catch(() => undefined);
      if (request) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'answered with a content type that is neither JSON nor an event stream');
      return;
    }
    const text = await response.text().catch(() => '');
    // A 2026 server answers a request it refuses with its JSON-RPC error on a 400.
    if (status === 400 && enveloped !== undefined) {
      const error = parseJson(text);
      const refusal = classifyInbound(error);
      if (refusal?.kind === 'error' && refusal.id === id) {
        this.onmessage?.(error as JSONRPCMessage);
        return;
      }
    }
    // No body in the message: an upstream's error page may quote anything.
    throw new UpstreamHttpError(this.server, status);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort(new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed'));
    this.onclose?.();
  }

  private deliverJson(bytes: Buffer): void {
    const data = parseJson(bytes.toString('utf8'));
    for (const value of Array.isArray(data) ? data : [data]) this.deliver(value);
  }

  private deliver(value: unknown): void {
    if (this.closed) return;
    if (!isRpcMessage(value)) {
      this.onerror?.(new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'sent a message that is not JSON-RPC'));
      return;
    }
    this.onmessage?.(value);
  }

  /**
   * Reads one event stream to its end. A POST's stream that ends before the answer it owes, after
   * the server gave its events ids, is resumed with a GET (`Last-Event-ID`: MCP 2025-11-25,
   * Transports, "Resumability and Redelivery"); the standalone GET stream is reopened.
   */
  private async readStream(body: ReadableStream<Uint8Array>, read: StreamRead, attempt = 0): Promise<void> {
    let lastEventId: string | undefined;
    let answered = false;
    const parser = createParser({
      onEvent: (event) => {
        if (event.id !== undefined) lastEventId = event.id;
        if ((event.event !== undefined && event.event !== 'message') || event.data === '') return;
        const value = parseJson(event.data);
        const message = classifyInbound(value);
        if (message !== undefined && (message.kind === 'result' || message.kind === 'error') && message.id === read.requestId) answered = true;
        this.deliver(value);
      },
    });
    let failure: unknown;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch (error) {
      failure = error;
    } finally {
      reader.releaseLock();
    }
    if (this.closed || read.signal.aborted) return;
    const tooLarge = findCause(failure, (value): value is UpstreamError => value instanceof UpstreamError && value.code === 'UPSTREAM_MESSAGE_TOO_LARGE');
    if (tooLarge !== undefined) this.onerror?.(tooLarge);
    if (read.requestId === undefined) {
      this.openStandaloneStream(lastEventId === undefined ? attempt + 1 : 0, lastEventId);
      return;
    }
    if (!answered && lastEventId !== undefined && attempt < MAX_STREAM_RETRIES) {
      void this.resume(read, lastEventId, attempt + 1);
      return;
    }
    read.onRequestStreamEnd?.();
  }

  private async resume(read: StreamRead, lastEventId: string, attempt: number): Promise<void> {
    try {
      const body = await this.openGet(lastEventId, read.signal);
      if (body !== undefined) return await this.readStream(body, read, attempt);
    } catch (error) {
      this.logger.debug({ server: this.server, code: (error as { code?: unknown }).code }, 'upstream stream could not be resumed');
    }
    read.onRequestStreamEnd?.();
  }

  /** The GET stream of what the server sends outside any request (2025-era sessions). */
  private openStandaloneStream(failures: number, lastEventId: string | undefined): void {
    if (this.closed || failures > MAX_STREAM_RETRIES) return;
    const open = async () => {
      if (this.closed) return;
      try {
        const body = await this.openGet(lastEventId, this.closing.signal);
        if (body !== undefined) await this.readStream(body, { signal: this.closing.signal }, failures);
      } catch (error) {
        if (this.closed) return;
        this.logger.debug({ server: this.server, code: (error as { code?: unknown }).code }, 'upstream GET stream failed');
        this.openStandaloneStream(failures + 1, lastEventId);
      }
    };
    if (failures === 0 && lastEventId === undefined) void open();
    else setTimeout(() => void open(), STREAM_RETRY_MS).unref();
  }

  /** A GET for the server's stream; undefined when it offers none (405). */
  private async openGet(lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const answer = await this.http.exchange(this.url, { method: 'GET', headers, body: null, signal });
    const response = await this.http.response(this.url, 'GET', null, signal, answer);
    if (response.status === 405) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    if (!response.ok || response.body === null || !isEventStreamContentType(response.headers.get('content-type'))) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamHttpError(this.server, response.status, 'answered its GET stream with');
    }
    return response.body;
  }
}

function envelopeVersion(params: Record<string, unknown> | undefined): string | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' ? version : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A 404 from an HTTP upstream on a request that carried its session id: the upstream forgot the
 * session (restart, expiry), and a fresh connection re-initialises it (MCP 2025-11-25, Transports,
 * "Session Management": the client MUST start a new session on 404). The error may arrive
 * wrapped, so its causes are searched a few levels deep.
 */
export function httpSessionExpired(error: unknown): boolean {
  return httpStatusOf(error) === 404;
}

/**
 * A 2025 session's own connection to an HTTP upstream speaks the 2025 revision when the upstream
 * offers it, so subscriptions, log levels and server→client requests keep their native form end
 * to end; an upstream that refuses the 2025 handshake (it only speaks 2026) is negotiated with.
 * `open` makes one connection attempt with a fresh transport.
 */
export async function prefer2025Handshake<T>(open: (negotiation?: '2025') => Promise<T>, logger: Logger): Promise<T> {
  try {
    return await open('2025');
  } catch (error) {
    // A refusal for want of authorization is no refusal of the revision: the other handshake
    // would be refused the same way (and a per-user token it refused is already dropped).
    if (authRequiredIn(error) !== undefined) throw error;
    logger.debug('upstream refused the 2025 handshake; negotiating');
  }
  return open();
}
