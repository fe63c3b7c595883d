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
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { BodyLimits } from './bounded-body.js';
import { answerAsResponse, headerValue, prepareHop, sendHop, type HopAnswer, type HopRequest, type RawHop } from './dispatch-hop.js';

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

/** A prepared body the next hop can send again; a stream is consumed by the first. */
function isReplayable(body: RawHop['body']): boolean {
  return !(body instanceof Readable);
}

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

/** A request as `createGuardedRequest` sends it: headers a lower-cased record (fetch's defaults included). */
export interface GuardedRequestInit {
  method: string;
  headers: Record<string, string>;
  body: RawHop['body'];
  signal?: AbortSignal;
}

/** Sends a request with the redirect policy and answers with the last hop's raw answer. */
export type GuardedRequest = (url: URL, init: GuardedRequestInit) => Promise<HopAnswer>;

/**
 * The redirect policy over raw hops (`sendHop`): what `createGuardedFetch` does, without a
 * `Headers` or a `Response` per call, for callers that read the answer themselves.
 */
export function createGuardedRequest(options: GuardedFetchOptions): GuardedRequest {
  const { server, dispatcher, logger } = options;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  if (typeof server !== 'string' || server === '') throw new TypeError('guarded fetch: server must be a non-empty string');
  if (!Number.isInteger(maxRedirects) || maxRedirects < 0) throw new TypeError('guarded fetch: maxRedirects must be a non-negative integer');

  const refuse = (reason: string): UpstreamError => {
    logger?.warn({ server, code: 'UPSTREAM_BLOCKED', reason }, 'egress guard refused an upstream redirect');
    return new UpstreamError('UPSTREAM_BLOCKED', server, reason);
  };

  return async function guardedRequest(url, init) {
    const method = init.method.toUpperCase();
    if (init.signal) allowManyListeners(init.signal);
    let current = url;
    for (let followed = 0; ; followed++) {
      // Each hop is one `Dispatcher.request()` on the egress dispatcher (not WHATWG fetch: see
      // dispatch-hop.ts); our own errors (a guard refusal) surface as they are.
      const answer = await sendHop({ server, dispatcher, url: current, method, headers: init.headers, body: init.body, signal: init.signal });
      const location = REDIRECT_STATUSES.has(answer.statusCode) ? headerValue(answer.headers, 'location') : undefined;
      if (location === undefined) return answer;
      // The redirect's own body is never read: release the connection before deciding.
      answer.body.dump().catch(() => undefined);

      if (followed >= maxRedirects) throw refuse(`more than ${maxRedirects} redirects refused`);
      let target: URL;
      try {
        target = new URL(location, current);
      } catch {
        throw refuse('redirect to an invalid location refused');
      }
      if (target.origin !== current.origin) throw refuse('cross-origin redirect refused');
      if (target.username !== '' || target.password !== '') throw refuse('redirect carrying credentials refused');
      const keepsMethod = answer.statusCode === 307 || answer.statusCode === 308 || method === 'GET' || method === 'HEAD';
      if (!keepsMethod) throw refuse('redirect that changes the request method refused');
      if (!isReplayable(init.body)) throw refuse('redirect of a streamed request body refused');
      current = target;
    }
  };
}

/**
 * Build the fetch for one upstream. The caller's `init.redirect` is ignored: this function owns
 * the redirect policy and always fetches each hop with `redirect: 'manual'`.
 */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const { server, limits, oversizedEvent } = options;
  const request = createGuardedRequest(options);
  return async function guardedFetch(url, init = {}) {
    const method = (init.method ?? 'GET').toUpperCase();
    let target: URL;
    try {
      // A URL is only read here (each hop gets a new one), so the caller's is used as it is.
      target = url instanceof URL ? url : new URL(url);
    } catch {
      // URL's own error carries the input; ours must not.
      throw new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'upstream URL is not a valid absolute URL');
    }
    const prepared = await prepareHop(target, init);
    const hop: Omit<HopRequest, 'dispatcher'> = { server, url: target, method, init, limits, oversizedEvent };
    return answerAsResponse(hop, await request(target, { method, headers: prepared.headers, body: prepared.body, signal: init.signal ?? undefined }));
  };
}
