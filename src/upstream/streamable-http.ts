/**
 * Streamable HTTP connector: the SDK client transport over our own `fetch`, with a lean path for
 * a 2025-era request answered with one JSON body (`lean-http-transport.ts`). Each request's
 * headers are rebuilt from an allowlist of what the SDK set plus the configured `headers` and
 * `envHeaders` (read when each request is built, so a rotated secret is picked up without a
 * restart), and it goes out through the server's egress dispatcher, which checks the address
 * actually dialled; redirects are followed same-origin only, each hop checked (src/net). Every
 * answer is read bounded: a JSON answer or SSE event up to `maxMessageBytes` (over it the call
 * fails with `UPSTREAM_MESSAGE_TOO_LARGE` naming the server, and the connection is reset), an
 * error body up to 64 KiB. Inside a traced call, the `traceparent` (and `tracestate`) of its
 * client span is added (observability/tracing.ts).
 */
import { SdkHttpError, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { Dispatcher } from 'undici';
import type { HttpServerConfig, RemoteServerConfig } from '../config/schema.js';
import { DEFAULT_BODY_LIMITS } from '../net/bounded-body.js';
import { answerAsResponse, withFetchDefaults } from '../net/dispatch-hop.js';
import { createGuardedFetch, createGuardedRequest, type GuardedFetch } from '../net/guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import { compileOutboundHeaders } from '../policy/outbound-headers.js';
import { authRequiredIn, readingAuthChallenges } from './auth-required.js';
import type { UpstreamTokenSource } from './credentials/token-source.js';
import { outsideAnyRequest } from './credentials/subject-tokens.js';
import type { CredentialOwner } from './credentials/credential-owner.js';
import { LeanHttpTransport, type LeanPost } from './lean-http-transport.js';
import { oversizedAnswers } from './oversized-answer.js';
import { currentUpstreamHeaders } from '../observability/tracing.js';
import { findCause } from '../errors.js';

export interface HttpConnectorDeps {
  /** The egress dispatcher for this server (one per server: the guard is per-server policy). */
  dispatcherFor(server: string, config: RemoteServerConfig): Dispatcher;
  /** Reads an environment variable by name (the config layer owns process.env). */
  readEnv(name: string): string | undefined;
  /** Environment variable names the policy lets `envHeaders` read; `undefined` allows any. */
  allowedEnvNames?: readonly string[];
  /** The most one upstream message may hold (policy `limits.maxUpstreamMessageBytes`); default 16 MiB. */
  maxMessageBytes?: number;
  /** The gateway's own credentials for a server with `upstreamAuth` (upstream/credentials/). */
  tokenSourceFor?(server: string, config: RemoteServerConfig, owner: CredentialOwner | undefined): UpstreamTokenSource | undefined;
  /** Whose connection this is (credential-owner.ts); absent on connections no caller owns. */
  credentialOwner?: CredentialOwner | undefined;
}

/** Bodies read only for an error message (an error status, an unexpected type) are cut here. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

interface UpstreamHttp {
  /** The `fetch` the SDK's transports send through. */
  fetch: GuardedFetch;
  /** The same policy for the lean exchange (`lean-http-transport.ts`). */
  lean: LeanPost;
}

/**
 * What every HTTP upstream kind sends through: the request's headers rebuilt from what the
 * transport set plus `headers` and `envHeaders`, then the redirect policy over the server's egress
 * dispatcher (`dispatcher`, default `deps.dispatcherFor`); as a `fetch`, and as raw hops. A 401/403
 * that asks for authorization (naming protected resource metadata) rejects with
 * `UpstreamAuthRequired` (auth-required.ts), on either.
 */
function createUpstreamHttp(server: string, config: RemoteServerConfig, deps: HttpConnectorDeps, logger: Logger, dispatcher: Dispatcher): UpstreamHttp {
  const outbound = compileOutboundHeaders({
    headers: config.headers,
    envHeaders: config.envHeaders,
    ...(config.envReferences === undefined ? {} : { templates: config.envReferences.headers }),
    allowedEnvNames: deps.allowedEnvNames,
  });
  const maxMessageBytes = deps.maxMessageBytes ?? DEFAULT_BODY_LIMITS.maxMessageBytes;
  const limits = { maxMessageBytes, maxOtherBodyBytes: MAX_ERROR_BODY_BYTES };
  const oversizedEvent = (body: RequestInit['body']) => oversizedAnswers(server, maxMessageBytes, body);
  const guardOptions = { server, dispatcher, logger, limits, oversizedEvent };
  const guarded = createGuardedFetch(guardOptions);
  const reported = new Set<string>();
  const tokens = deps.tokenSourceFor?.(server, config, deps.credentialOwner);

  const outboundHeaders = (given: Headers | Record<string, string>): Record<string, string> => {
    const built = outbound.build(given, deps.readEnv);
    for (const skip of built.skipped) {
      const key = `${skip.variable}:${skip.reason}`;
      if (reported.has(key)) continue;
      reported.add(key);
      // Names only: the value of a variable is a secret, even a malformed one.
      logger.warn({ server, header: skip.header, variable: skip.variable, reason: skip.reason }, 'upstream header skipped');
    }
    // A traced call's context (W3C Trace Context): the header beside `params._meta` (tracing.ts),
    // on the lean exchange and the SDK's path alike.
    const trace = currentUpstreamHeaders();
    if (trace !== undefined) Object.assign(built.headers, trace);
    return built.headers;
  };

  const https = new URL(config.url).protocol === 'https:';
  return {
    // Outermost, so a refused token is invalidated before the refusal becomes `UpstreamAuthRequired`.
    fetch: readingAuthChallenges(async function fetchUpstream(url: string | URL, init?: RequestInit): Promise<Response> {
      // The SDK hands a `Headers` already; it is only read here, never changed.
      const given = init?.headers;
      const headers = outboundHeaders(given instanceof Headers ? given : new Headers(given));
      // The SDK passes its transport-long signal to every request. WHATWG fetch left a listener on
      // it per request until garbage collection (profile: 4.5% in addEventListener); each hop is a
      // `Dispatcher.request()` now, which removes its listener when the answer completes (tested
      // in guarded-fetch.test.ts), so the signal is passed as it is.
      if (tokens === undefined) return guarded(url, { ...init, headers });
      // A GET is the connection's own stream, not a call: a per-principal token is the principal's
      // latest, not that of the request during which the SDK happened to open it (subject-tokens.ts).
      const context = init?.method === 'GET' ? outsideAnyRequest : <T>(work: () => T) => work();
      const token = await context(() => tokens.token());
      headers.authorization = `Bearer ${token}`;
      const response = await guarded(url, { ...init, headers });
      // Refused: the next request fetches a fresh token (this one's 401 reaches the SDK as it is).
      if (response.status === 401) context(() => tokens.invalidate(token));
      return response;
    }, { server, upstreamUrl: config.url, dispatcher, logger }),
    lean: {
      server,
      request: createGuardedRequest(guardOptions),
      headers: (sdkHeaders) => withFetchDefaults(outboundHeaders(sdkHeaders), https, null),
      response: (url, init, answer) => answerAsResponse({ server, url, method: 'POST', init, limits, oversizedEvent }, answer),
      limits,
    },
  };
}

/** The `fetch` every HTTP upstream kind sends through (`createUpstreamHttp`). */
export function createUpstreamFetch(
  server: string,
  config: RemoteServerConfig,
  deps: HttpConnectorDeps,
  logger: Logger,
  dispatcher: Dispatcher = deps.dispatcherFor(server, config),
): GuardedFetch {
  return createUpstreamHttp(server, config, deps, logger, dispatcher).fetch;
}

export function createHttpTransport(server: string, config: HttpServerConfig, deps: HttpConnectorDeps, logger: Logger): Transport {
  const http = createUpstreamHttp(server, config, deps, logger, deps.dispatcherFor(server, config));
  // A server with credentials of the gateway's own takes the SDK's path: its token is fetched
  // asynchronously per request, which the lean exchange's header step does not do.
  if (config.upstreamAuth !== undefined) return new StreamableHTTPClientTransport(new URL(config.url), { fetch: http.fetch, redirectPolicy: 'follow' });
  return new LeanHttpTransport(new URL(config.url), http.fetch, http.lean);
}

/**
 * A 404 from an HTTP upstream on a request that carried its session id: the upstream forgot the
 * session (restart, expiry), and a fresh connection re-initialises it (MCP 2025-11-25, Transports,
 * "Session Management": the client MUST start a new session on 404). The error may arrive
 * wrapped, so its causes are searched a few levels deep.
 */
export function httpSessionExpired(error: unknown): boolean {
  return findCause(error, (value): value is SdkHttpError => value instanceof SdkHttpError)?.status === 404;
}

/**
 * A 2025 session's own connection to an HTTP upstream speaks the 2025 revision when the upstream
 * offers it, so subscriptions, log levels and server→client requests keep their native form end
 * to end; an upstream that refuses the 2025 handshake (it only speaks 2026) is negotiated with.
 * `open` makes one connection attempt with a fresh transport.
 */
export async function preferLegacyHandshake<T>(open: (negotiation?: 'legacy') => Promise<T>, logger: Logger): Promise<T> {
  try {
    return await open('legacy');
  } catch (error) {
    // A refusal for want of authorization is no refusal of the revision: the other handshake
    // would be refused the same way (and a per-user token it refused is already dropped).
    if (authRequiredIn(error) !== undefined) throw error;
    logger.debug('upstream refused the 2025 handshake; negotiating');
  }
  return open();
}
