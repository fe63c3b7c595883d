/**
 * Per-principal tokens for one upstream (`upstreamAuth.kind: "tokenExchange"`): the caller's own
 * inbound access token (subject-tokens.ts) exchanged at the authorization server for one whose
 * audience is the upstream (RFC 8693 §2.1: `grant_type`
 * `urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token_type` access token,
 * `resource` — the upstream's URL by default — and/or `audience`, `scope`), with the gateway's own
 * client authenticating (`client_secret_basic`, token-endpoint.ts). The inbound token itself is
 * never sent to the upstream.
 *
 * - One source per connection, bound to the connection's principal when it is opened
 *   (`forPrincipal`): the token a request carries is always that principal's, so principal A's
 *   token never rides on principal B's connection. A connection of no principal (the primary, a
 *   pooled or session-brought one) gets a source that refuses, naming the server.
 * - The subject of a call is the token of the request that carries it (subject-tokens.ts): two
 *   tokens of one principal with different scopes, used alternately, are each exchanged for
 *   their own. Cached per (principal, subject token) — at most `maxPrincipals` entries and
 *   `maxBytes`, least recently used out — and no exchanged token is used past its subject's `exp`.
 * - Only subject tokens of `issuer` (the authorization server at `tokenUrl`) are exchanged: a
 *   token another inbound issuer signed is never sent there, and its call fails saying which
 *   issuer to authenticate with.
 * - Refreshed ahead of expiry (in the background while the current one is still valid) unless
 *   its expiry is its subject's, which no renewal can extend; one exchange in flight per subject
 *   however many requests wait; a refused exchange is remembered `FAILURE_MEMORY_MS` per subject
 *   (a refused subject costs one round trip to the authorization server, not one per request);
 *   a 401 from the upstream drops that token (at most once per cooldown, as `clientCredentials`).
 * - Failures name the server and the HTTP status or OAuth error code only.
 */
import { LRUCache } from 'lru-cache';
import { UpstreamError } from '../../errors.js';
import type { GuardedFetch } from '../../net/guarded-fetch.js';
import { REFETCH_COOLDOWN_MS, REFRESH_AHEAD_MS } from './client-credentials.js';
import type { UpstreamTokenSource } from './token-source.js';
import type { SubjectToken, SubjectTokens } from './subject-tokens.js';
import { clientSecret, requestToken } from './token-endpoint.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** RFC 8693 §3: what an exchange may issue that is usable as a Bearer access token. */
const EXCHANGED_TOKEN_TYPES: ReadonlySet<string> = new Set([ACCESS_TOKEN_TYPE, 'urn:ietf:params:oauth:token-type:jwt']);

export interface TokenExchangeConfig {
  tokenUrl: string;
  clientId: string;
  clientSecretEnv: string;
  resource?: string | undefined;
  audience?: string | undefined;
  scope?: string | undefined;
}

export interface TokenExchangeOptions {
  server: string;
  upstreamUrl: string;
  config: TokenExchangeConfig;
  /** The `iss` of the subject tokens this authorization server exchanges (the schema settles it). */
  issuer: string;
  subjects: SubjectTokens;
  readEnv(name: string): string | undefined;
  fetch: GuardedFetch;
  maxPrincipals?: number;
  maxBytes?: number;
  now?: () => number;
}

export interface TokenExchange {
  /** The token source of one connection, bound to its principal (undefined: a connection of nobody's). */
  forPrincipal(principal: string | undefined): UpstreamTokenSource;
  /** Exchanged tokens held now. */
  readonly size: number;
  /** Forgets every exchanged token (the server is stopped or removed). */
  clear(): void;
}

interface Exchanged {
  readonly token: string;
  readonly expiresAt: number;
  /** From here on it is renewed in the background. */
  readonly refreshAt: number;
  /** The upstream refused it: not sent again. */
  dropped: boolean;
  /** When this subject's token was last dropped (the cooldown). */
  droppedAt: number;
}

/** A token with no `expires_in` is used this long (and never past its subject's `exp`). */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const EXP_GRANULARITY_MS = 1_000;
const DEFAULT_MAX_PRINCIPALS = 10_000;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
/** A refused exchange is answered from memory this long for the same subject token. */
export const FAILURE_MEMORY_MS = 5_000;
const MAX_FAILURES = 10_000;

export function tokenExchange(options: TokenExchangeOptions): TokenExchange {
  const { server, config, subjects, issuer } = options;
  const now = options.now ?? Date.now;
  const keyOf = (principal: string, subject: SubjectToken) => `${subject.id}\n${principal}`;
  const held = new LRUCache<string, Exchanged>({
    max: options.maxPrincipals ?? DEFAULT_MAX_PRINCIPALS,
    maxSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
    sizeCalculation: (entry, key) => entry.token.length + key.length,
  });
  const failures = new LRUCache<string, { error: unknown; until: number }>({ max: MAX_FAILURES });
  // At most one per subject, removed when settled: bounded by the principals' requests in flight.
  const pending = new Map<string, Promise<string>>();

  async function exchange(key: string, subject: SubjectToken): Promise<string> {
    const secret = clientSecret(server, config.clientSecretEnv, options.readEnv);
    const form = new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: subject.token, subject_token_type: ACCESS_TOKEN_TYPE });
    const resource = config.resource ?? (config.audience === undefined ? options.upstreamUrl : undefined);
    if (resource !== undefined) form.set('resource', resource);
    if (config.audience !== undefined) form.set('audience', config.audience);
    if (config.scope !== undefined) form.set('scope', config.scope);
    // Counted from before the request, less a second: `exp` is in whole seconds (RFC 7519 §2).
    const issuedAt = now();
    const request = { server, tokenUrl: config.tokenUrl, clientId: config.clientId, secret, form, fetch: options.fetch, issuedTokenTypes: EXCHANGED_TOKEN_TYPES };
    let issued: Awaited<ReturnType<typeof requestToken>>;
    try {
      issued = await requestToken(request);
    } catch (error) {
      failures.set(key, { error, until: now() + FAILURE_MEMORY_MS });
      throw error;
    }
    const ownExpiry = issuedAt + (issued.lifetimeMs ?? DEFAULT_LIFETIME_MS) - EXP_GRANULARITY_MS;
    const expiresAt = Math.min(ownExpiry, subject.expiresAt);
    // Short-lived tokens are renewed a quarter of their life ahead, long ones a minute ahead; one
    // that ends with its subject is not renewed at all (a renewal would end there too).
    const refreshAt = ownExpiry > subject.expiresAt ? expiresAt : expiresAt - Math.min(REFRESH_AHEAD_MS, (expiresAt - issuedAt) / 4);
    // Kept only while its subject is live: a late answer for a lapsed subject is not cached.
    if (subject.expiresAt > now()) {
      const droppedAt = held.peek(key)?.droppedAt ?? Number.NEGATIVE_INFINITY;
      held.set(key, { token: issued.token, expiresAt, refreshAt, dropped: false, droppedAt });
    }
    return issued.token;
  }

  function exchangeOnce(key: string, subject: SubjectToken): Promise<string> {
    const running = pending.get(key);
    if (running !== undefined) return running;
    const started = exchange(key, subject).finally(() => {
      if (pending.get(key) === started) pending.delete(key);
    });
    pending.set(key, started);
    return started;
  }

  function subjectOf(principal: string): SubjectToken | UpstreamError {
    const subject = subjects.current(principal);
    if (subject === undefined) {
      return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'the gateway holds no live access token of this caller to exchange for the upstream: authenticate again with a fresh token and retry');
    }
    if (subject.issuer !== issuer) {
      // Never sent to this authorization server: it did not issue it (RFC 8693 §2.1 subject_token).
      return new UpstreamError('UPSTREAM_UNAVAILABLE', server, `exchanges only access tokens of issuer ${issuer}, and this caller's token is of another: authenticate with issuer ${issuer} to use this server`);
    }
    return subject;
  }

  function tokenOf(principal: string): Promise<string> {
    const subject = subjectOf(principal);
    if (subject instanceof UpstreamError) return Promise.reject(subject);
    const key = keyOf(principal, subject);
    const at = now();
    const current = held.get(key);
    const usable = current !== undefined && !current.dropped && current.expiresAt > at;
    if (usable && current.refreshAt > at) return Promise.resolve(current.token);
    const failed = failures.get(key);
    if (!usable && failed !== undefined && failed.until > at) return Promise.reject(failed.error);
    const next = exchangeOnce(key, subject);
    if (usable) {
      // Close to expiry but still valid: renewed in the background, the current one serves meanwhile.
      next.catch(() => undefined);
      return Promise.resolve(current.token);
    }
    return next;
  }

  const nobody: UpstreamTokenSource = {
    token: () => Promise.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', server, "is reached only on a principal's own connection (upstreamAuth tokenExchange); this connection belongs to no principal")),
    invalidate: () => undefined,
  };

  return {
    get size() {
      return held.size;
    },
    clear() {
      held.clear();
      failures.clear();
    },
    forPrincipal(principal) {
      if (principal === undefined) return nobody;
      return {
        token: () => tokenOf(principal),
        invalidate(token) {
          // The 401 is read in the context of the request that sent the token: the same subject.
          const subject = subjectOf(principal);
          if (subject instanceof UpstreamError) return;
          const current = held.peek(keyOf(principal, subject));
          // Dropped at most once per cooldown: an upstream that refuses every token must not turn
          // each request into a round trip to the authorization server.
          if (current === undefined || current.token !== token || current.dropped || now() - current.droppedAt < REFETCH_COOLDOWN_MS) return;
          current.dropped = true;
          current.droppedAt = now();
        },
      };
    },
  };
}
