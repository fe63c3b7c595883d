/**
 * Streamable HTTP connector: the SDK client transport over our own `fetch`. Each request's
 * headers are rebuilt from an allowlist of what the SDK set plus the configured `headers` and
 * `envHeaders` (read when each request is built, so a rotated secret is picked up without a
 * restart), and it goes out through the server's egress dispatcher, which checks the address
 * actually dialled; redirects are followed same-origin only, each hop checked (src/net). Every
 * answer is read bounded: a JSON answer or SSE event up to `maxMessageBytes` (over it the call
 * fails with `UPSTREAM_MESSAGE_TOO_LARGE` naming the server, and the connection is reset), an
 * error body up to 64 KiB.
 */
import { SdkHttpError, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { Dispatcher } from 'undici';
import type { HttpServerConfig, RemoteServerConfig } from '../config/schema.js';
import { DEFAULT_BODY_LIMITS } from '../net/bounded-body.js';
import { createGuardedFetch, type GuardedFetch } from '../net/guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import { compileOutboundHeaders } from '../policy/outbound-headers.js';
import { readingAuthChallenges } from './auth-required.js';
import type { UpstreamTokenSource } from './credentials/client-credentials.js';
import { oversizedAnswers } from './oversized-answer.js';

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
  tokenSourceFor?(server: string, config: RemoteServerConfig): UpstreamTokenSource | undefined;
}

/** Bodies read only for an error message (an error status, an unexpected type) are cut here. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The `fetch` every HTTP upstream kind sends through: the request's headers rebuilt from what the
 * transport set plus `headers` and `envHeaders`, then the guarded fetch over the server's egress
 * dispatcher (`dispatcher`, default `deps.dispatcherFor`). A 401/403 that asks for authorization
 * (naming protected resource metadata) rejects with `UpstreamAuthRequired` (auth-required.ts).
 */
export function createUpstreamFetch(
  server: string,
  config: RemoteServerConfig,
  deps: HttpConnectorDeps,
  logger: Logger,
  dispatcher: Dispatcher = deps.dispatcherFor(server, config),
): GuardedFetch {
  const outbound = compileOutboundHeaders({
    headers: config.headers,
    envHeaders: config.envHeaders,
    allowedEnvNames: deps.allowedEnvNames,
  });
  const maxMessageBytes = deps.maxMessageBytes ?? DEFAULT_BODY_LIMITS.maxMessageBytes;
  const guarded = createGuardedFetch({
    server,
    dispatcher,
    logger,
    limits: { maxMessageBytes, maxOtherBodyBytes: MAX_ERROR_BODY_BYTES },
    oversizedEvent: (body) => oversizedAnswers(server, maxMessageBytes, body),
  });
  const reported = new Set<string>();
  const tokens = deps.tokenSourceFor?.(server, config);

  // Outermost, so a refused token is invalidated before the refusal becomes `UpstreamAuthRequired`.
  return readingAuthChallenges(async function fetchUpstream(url: string | URL, init?: RequestInit): Promise<Response> {
    // The SDK hands a `Headers` already; it is only read here, never changed.
    const given = init?.headers;
    const built = outbound.build(given instanceof Headers ? given : new Headers(given), deps.readEnv);
    for (const skip of built.skipped) {
      const key = `${skip.variable}:${skip.reason}`;
      if (reported.has(key)) continue;
      reported.add(key);
      // Names only: the value of a variable is a secret, even a malformed one.
      logger.warn({ server, header: skip.header, variable: skip.variable, reason: skip.reason }, 'upstream header skipped');
    }
    // The SDK passes its transport-long signal to every request. WHATWG fetch left a listener on
    // it per request until garbage collection (profile: 4.5% in addEventListener); each hop is a
    // `Dispatcher.request()` now, which removes its listener when the answer completes (tested
    // in guarded-fetch.test.ts), so the signal is passed as it is.
    if (tokens === undefined) return guarded(url, { ...init, headers: built.headers });
    const token = await tokens.token();
    built.headers.authorization = `Bearer ${token}`;
    const response = await guarded(url, { ...init, headers: built.headers });
    // Refused: the next request fetches a fresh token (this one's 401 goes on to the challenge reader).
    if (response.status === 401) tokens.invalidate(token);
    return response;
  }, { server, upstreamUrl: config.url, dispatcher, logger });
}

export function createHttpTransport(server: string, config: HttpServerConfig, deps: HttpConnectorDeps, logger: Logger): Transport {
  const fetchUpstream = createUpstreamFetch(server, config, deps, logger);
  // Redirects are ours (same-origin only, each hop checked): tell the SDK not to add its own.
  return new StreamableHTTPClientTransport(new URL(config.url), { fetch: fetchUpstream, redirectPolicy: 'follow' });
}

/**
 * A 404 from an HTTP upstream on a request that carried its session id: the upstream forgot the
 * session (restart, expiry), and a fresh connection re-initialises it (MCP 2025-11-25, Transports,
 * "Session Management": the client MUST start a new session on 404). The error may arrive
 * wrapped, so its causes are searched a few levels deep.
 */
export function httpSessionExpired(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError) return current.status === 404;
    current = current.cause;
  }
  return false;
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
  } catch {
    logger.debug('upstream refused the 2025 handshake; negotiating');
  }
  return open();
}
