/**
 * `fetch` for HTTP upstreams with the gateway's redirect policy: follow at most `maxRedirects`
 * (default 5) redirects, within the origin of the request only, each hop through the egress
 * dispatcher (so each hop's connection is checked like the first). Each hop is sent with
 * `Dispatcher.request()` and answered as a WHATWG `Response` (`dispatchHop`), which costs far less
 * per call than WHATWG `fetch`.
 *
 * Why same-origin only: the request carries injected secrets (`Authorization`, API keys from
 * `headers`/`envHeaders`). Fetch strips `Authorization` on a cross-origin redirect but not custom
 * headers such as `X-Api-Key`, so following a redirect to another origin would hand them to
 * whoever the upstream (or anyone able to answer in its name) points at. A redirect elsewhere is
 * refused with `UPSTREAM_BLOCKED`; the operator can configure the new URL if it is intended.
 *
 * Also refused: a redirect that would change the method (301/302/303 of a POST: a JSON-RPC POST
 * turned into a bodiless GET), one whose body cannot be replayed (a stream), one carrying
 * credentials in the URL, and the hop after the last allowed one. Messages never carry the URL.
 */
import { setMaxListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import { UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { BodyLimits } from './bounded-body.js';
import { dispatchHop, type HopRequest } from './dispatch-hop.js';

export interface GuardedFetchOptions {
  /** The upstream's config key, named in errors and logs. */
  server: string;
  /** The server's egress dispatcher (`createEgressDispatcher`). */
  dispatcher: Dispatcher;
  /** Redirects followed before refusing; default 5. */
  maxRedirects?: number;
  /** Refused redirects are logged here at warn (server and reason only). */
  logger?: Logger;
  /** What may be read of each response body (`dispatchHop`); default `DEFAULT_BODY_LIMITS`. */
  limits?: BodyLimits;
  /** What an event stream ends with instead of an over-long event (`dispatchHop`). */
  oversizedEvent?: HopRequest['oversizedEvent'];
}

/** The SDK's `FetchLike`: what `StreamableHTTPClientTransport` accepts as `fetch`. */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DEFAULT_MAX_REDIRECTS = 5;

/** A body fetch can send again on the next hop; a stream is consumed by the first. */
function isReplayable(body: RequestInit['body']): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof URLSearchParams ||
    body instanceof Blob ||
    body instanceof FormData
  );
}

/**
 * Build the fetch for one upstream. The caller's `init.redirect` is ignored: this function owns
 * the redirect policy and always fetches each hop with `redirect: 'manual'`.
 */
/** Signals already allowed any number of abort listeners. */
const raised = new WeakSet<AbortSignal>();

/**
 * Each hop adds one abort listener to the caller's signal and removes it when the answer
 * completes; the SDK passes one transport-long signal to every request of a connection, so a
 * busy connection has one listener per request in flight. Node warns past 10 ("possible
 * EventTarget memory leak"): a false alarm here, on stderr, at any concurrency above 10.
 */
function allowManyListeners(signal: AbortSignal): void {
  if (raised.has(signal)) return;
  raised.add(signal);
  setMaxListeners(0, signal);
}

export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const { server, dispatcher, logger, limits, oversizedEvent } = options;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  if (typeof server !== 'string' || server === '') throw new TypeError('guarded fetch: server must be a non-empty string');
  if (!Number.isInteger(maxRedirects) || maxRedirects < 0) throw new TypeError('guarded fetch: maxRedirects must be a non-negative integer');

  const refuse = (reason: string): UpstreamError => {
    logger?.warn({ server, code: 'UPSTREAM_BLOCKED', reason }, 'egress guard refused an upstream redirect');
    return new UpstreamError('UPSTREAM_BLOCKED', server, reason);
  };

  return async function guardedFetch(url, init = {}) {
    const method = (init.method ?? 'GET').toUpperCase();
    if (init.signal) allowManyListeners(init.signal);
    let current: URL;
    try {
      // A URL is only read here (each hop gets a new one), so the caller's is used as it is.
      current = url instanceof URL ? url : new URL(url);
    } catch {
      // URL's own error carries the input; ours must not.
      throw new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'upstream URL is not a valid absolute URL');
    }
    for (let followed = 0; ; followed++) {
      // Each hop is one `Dispatcher.request()` on the egress dispatcher (not WHATWG fetch: see
      // dispatch-hop.ts); our own errors (a guard refusal) surface as they are.
      const response = await dispatchHop({ server, dispatcher, url: current, method, init, limits, oversizedEvent });
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      // The redirect's own body is never read: release the connection before deciding.
      await response.body?.cancel().catch(() => undefined);

      if (followed >= maxRedirects) throw refuse(`more than ${maxRedirects} redirects refused`);
      let target: URL;
      try {
        target = new URL(location, current);
      } catch {
        throw refuse('redirect to an invalid location refused');
      }
      if (target.origin !== current.origin) throw refuse('cross-origin redirect refused');
      if (target.username !== '' || target.password !== '') throw refuse('redirect carrying credentials refused');
      const keepsMethod = response.status === 307 || response.status === 308 || method === 'GET' || method === 'HEAD';
      if (!keepsMethod) throw refuse('redirect that changes the request method refused');
      if (!isReplayable(init.body)) throw refuse('redirect of a streamed request body refused');
      current = target;
    }
  };
}
