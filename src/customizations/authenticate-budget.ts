/**
 * The authenticate route's own rate, whatever the policy's `rateLimits` say (they are optional):
 * each accepted token drops the session's connection to the server and runs a fresh upstream
 * handshake, and a refused one an uncached protected resource metadata fetch, so a client could
 * otherwise make the gateway hammer an upstream (or its metadata host) as fast as it can post.
 *
 * Two token buckets in memory (policy/token-bucket.ts, bounded in keys): per principal (every
 * attempt, answered or refused; all unauthenticated callers share one), and per session × server
 * (attempts that name a server the caller may use). A spent bucket answers 429 `RATE_LIMITED`
 * with `Retry-After`. The keys hold session ids, never shown or logged.
 */
import { GatewayError } from '../errors.js';
import { KeyedRateLimiter, type RateDecision } from '../policy/token-bucket.js';

/** Authentications one session may make for one server a minute (bursts of as many). */
export const AUTHENTICATE_PER_SESSION_SERVER = 10;
/** Authentications one principal may make a minute, over all its sessions and servers. */
export const AUTHENTICATE_PER_PRINCIPAL = 60;

export interface AuthenticateBudgetOptions {
  /** The clock, in ms (default `Date.now`). */
  readonly now?: () => number;
  /** Most keys each bucket map tracks (default 10,000; the least recently used full bucket goes first). */
  readonly maxKeys?: number;
}

export interface AuthenticateBudget {
  /** Spends one of `principal`'s attempts; the refusal when none is left. */
  principal(principal: string | undefined): GatewayError | undefined;
  /**
   * Spends one of `session`'s attempts for `server`, as `principal` made them (keyed by all three:
   * a caller presenting another's session id spends only its own attempts); the refusal when none is left.
   */
  sessionServer(principal: string | undefined, session: string, server: string): GatewayError | undefined;
}

function refusal(decision: RateDecision, what: string, perMinute: number): GatewayError | undefined {
  if (decision.ok) return undefined;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new GatewayError('RATE_LIMITED', `too many authentications ${what} (at most ${perMinute} a minute); retry in ${seconds} s`, { retryAfterMs: decision.retryAfterMs });
}

export function authenticateBudget(options: AuthenticateBudgetOptions = {}): AuthenticateBudget {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 10_000;
  const principals = new KeyedRateLimiter({ perMinute: AUTHENTICATE_PER_PRINCIPAL, maxKeys });
  const sessionServers = new KeyedRateLimiter({ perMinute: AUTHENTICATE_PER_SESSION_SERVER, maxKeys });
  // The unauthenticated callers' key is empty; a principal's is prefixed, so none can share it.
  const principalKey = (principal: string | undefined): string => (principal === undefined ? '' : `p:${principal}`);
  return {
    principal: (principal) => refusal(principals.take(principalKey(principal), now()), 'by this principal', AUTHENTICATE_PER_PRINCIPAL),
    sessionServer: (principal, session, server) =>
      refusal(sessionServers.take(JSON.stringify([principalKey(principal), server, session]), now()), `for this session and server "${server}"`, AUTHENTICATE_PER_SESSION_SERVER),
  };
}
