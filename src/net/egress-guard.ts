/**
 * The egress guard: the undici dispatcher every HTTP upstream connection goes through, deciding at
 * connect time on the address actually dialled (docs/decisions.md, "Egress is decided on the
 * address dialled").
 *
 * How: an `Agent` whose `connect` is undici's own `buildConnector` wrapped. Before a socket is
 * opened, `decideConnect` classifies an IP literal directly, or the connector resolves the name
 * once, classifies every answer and dials the first one by address (pinning: no second lookup can
 * rebind the name to 127.0.0.1 between check and connect). TLS still verifies the certificate and
 * sends SNI for the original name (`servername`); the Host header keeps the name because undici
 * writes it from the request origin, not from the dialled address.
 *
 * Proxy environment variables (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`) are ignored on
 * purpose: this is a plain `Agent`, never `EnvHttpProxyAgent`, so a proxy cannot dial on our
 * behalf where the guard cannot see the address.
 *
 * Redirects are the caller's: see `createGuardedFetch` (re-exported here), which follows
 * same-origin redirects only, each hop through this dispatcher.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { decideConnect, type ConnectRefusal, type Resolve, type ResolvedAddress } from './connect-decision.js';
import { resolveWithin, systemResolve } from './resolve-once.js';

export { decideConnect, type ConnectDecision, type ConnectQuery, type Resolve, type ResolvedAddress } from './connect-decision.js';
export { createGuardedFetch, type GuardedFetch, type GuardedFetchOptions } from './guarded-fetch.js';

export interface EgressDispatcherOptions {
  /** The upstream's config key: named in errors and logs (never its URL). */
  server: string;
  /** Allow every address class (loopback, private, link-local…) for this server. */
  allowPrivateNetwork: boolean;
  /** False: refuse public addresses (a plaintext connection that must stay on the private network). Default true. */
  allowPublic?: boolean;
  /** Bounds name resolution and the TCP/TLS connect, each. */
  connectTimeoutMs: number;
  /** Name resolution; defaults to `dns.lookup(host, { all: true, verbatim: true })`. */
  resolve?: Resolve;
  /** Refusals are logged here at warn, with the server and the address class only. */
  logger?: Logger;
  /** Told of each refusal with the refused address class (a bounded set): metrics. */
  onRefusal?: (range: string) => void;
}

function validate(options: EgressDispatcherOptions): void {
  if (typeof options.server !== 'string' || options.server === '') {
    throw new TypeError('egress guard: server must be a non-empty string');
  }
  if (typeof options.allowPrivateNetwork !== 'boolean') {
    throw new TypeError('egress guard: allowPrivateNetwork must be a boolean');
  }
  if (!Number.isInteger(options.connectTimeoutMs) || options.connectTimeoutMs <= 0) {
    throw new TypeError('egress guard: connectTimeoutMs must be a positive integer');
  }
  if (options.resolve !== undefined && typeof options.resolve !== 'function') {
    throw new TypeError('egress guard: resolve must be a function');
  }
  if (options.allowPublic !== undefined && typeof options.allowPublic !== 'boolean') {
    throw new TypeError('egress guard: allowPublic must be a boolean');
  }
}

/**
 * The address one connection to `hostname` may dial: a literal is decided as it is, a name is
 * resolved once and every answer decided (see `decideConnect`). Rejects with `UpstreamError`
 * (`UPSTREAM_BLOCKED`, logged at warn with the address class only; or a resolution failure).
 * Shared by every dialler of the gateway: undici's connector here, `net.connect`'s lookup hook
 * in `guarded-lookup.ts`.
 */
export function createAddressPicker(options: EgressDispatcherOptions): (hostname: string) => Promise<ResolvedAddress> {
  validate(options);
  const { server, allowPrivateNetwork, connectTimeoutMs, logger } = options;
  const allowPublic = options.allowPublic !== false;
  const resolve = options.resolve ?? systemResolve;

  const refused = (refusal: ConnectRefusal): UpstreamError => {
    logger?.warn({ server, code: refusal.code, range: refusal.range, allowPrivateNetwork }, 'egress guard refused an upstream connection');
    options.onRefusal?.(refusal.range);
    return new UpstreamError(refusal.code, server, refusal.message);
  };

  return async function pickAddress(hostname) {
    const first = decideConnect({ hostname, allowPrivateNetwork, allowPublic });
    if (!first.ok) throw refused(first);
    if (first.action === 'dial') return first;
    const addresses = await resolveWithin(resolve, hostname, connectTimeoutMs, server);
    const second = decideConnect({ hostname, allowPrivateNetwork, allowPublic, addresses });
    if (!second.ok) throw refused(second);
    // `decideConnect` only answers `resolve` when it has no addresses; with them it dials or refuses.
    if (second.action !== 'dial') throw new UpstreamError('UPSTREAM_BLOCKED', server, 'connection refused: no address to dial');
    return second;
  };
}

/**
 * The guarded connector alone (undici's `connect` option shape), for callers that build their own
 * Client or Pool. Every call decides, resolves at most once, and dials an address, never a name.
 */
export function createEgressConnector(options: EgressDispatcherOptions): buildConnector.connector {
  const pick = createAddressPicker(options);
  const dial = buildConnector({ timeout: options.connectTimeoutMs });

  return function egressConnect(connectOptions, callback) {
    const { hostname } = connectOptions;
    pick(hostname).then(
      (target) => {
        // SNI and certificate checks follow the name the URL gave; an IP literal sends no SNI.
        const servername = connectOptions.servername || (isIP(hostname) === 0 ? hostname : undefined);
        try {
          dial({ ...connectOptions, hostname: target.address, ...(servername ? { servername } : {}) }, callback);
        } catch (error) {
          callback(error instanceof Error ? error : new Error('connect failed'), null);
        }
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error('connect refused'), null),
    );
  };
}

/**
 * The dispatcher for one HTTP upstream: an undici `Agent` (with `agentOptions`, timeouts say)
 * whose every new connection goes through `createEgressConnector`. A refusal fails the request with `UpstreamError` code
 * `UPSTREAM_BLOCKED` (undici's `fetch` rejects with `TypeError('fetch failed')` whose `cause` is
 * that error; `createGuardedFetch` unwraps it).
 */
export function createEgressDispatcher(options: EgressDispatcherOptions, agentOptions: Omit<Agent.Options, 'connect'> = {}): Dispatcher {
  return new Agent({ ...agentOptions, connect: createEgressConnector(options) });
}
