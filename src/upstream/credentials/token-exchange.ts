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
 * - Cached per principal (at most `maxPrincipals` and `maxBytes`, least recently used out) and
 *   bound to the subject token it was exchanged for: a principal's new inbound token gets a new
 *   exchange, and no exchanged token is used past its subject's `exp`.
 * - Refreshed ahead of expiry (in the background while the current one is still valid), one
 *   exchange in flight per principal however many requests wait; a 401 from the upstream drops
 *   that principal's token (at most once per cooldown, as `clientCredentials`).
 * - Failures name the server and the HTTP status or OAuth error code only.
 */
import { LRUCache } from 'lru-cache';
import { UpstreamError } from '../../errors.js';
import type { GuardedFetch } from '../../net/guarded-fetch.js';
import { REFETCH_COOLDOWN_MS, REFRESH_AHEAD_MS, type UpstreamTokenSource } from './client-credentials.js';
import type { SubjectToken, SubjectTokens } from './subject-tokens.js';
import { requestToken, tokenFailure } from './token-endpoint.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

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
  /** Principals with an exchanged token held now. */
  readonly size: number;
}

interface Exchanged {
  readonly token: string;
  /** The subject token it was exchanged for (`SubjectToken.id`). */
  readonly subjectId: string;
  readonly expiresAt: number;
  /** From here on it is renewed in the background. */
  readonly refreshAt: number;
  /** The upstream refused it: not sent again. */
  dropped: boolean;
  /** When this principal's token was last dropped (the cooldown). */
  droppedAt: number;
}

/** A token with no `expires_in` is used this long (and never past its subject's `exp`). */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const EXP_GRANULARITY_MS = 1_000;
const DEFAULT_MAX_PRINCIPALS = 10_000;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

export function tokenExchange(options: TokenExchangeOptions): TokenExchange {
  const { server, config, subjects } = options;
  const now = options.now ?? Date.now;
  const held = new LRUCache<string, Exchanged>({
    max: options.maxPrincipals ?? DEFAULT_MAX_PRINCIPALS,
    maxSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
    sizeCalculation: (entry, principal) => entry.token.length + principal.length + entry.subjectId.length,
  });
  // At most one per principal, removed when settled: bounded by the principals' connections.
  const pending = new Map<string, { subjectId: string; exchange: Promise<string> }>();

  async function exchange(principal: string, subject: SubjectToken): Promise<string> {
    const secret = options.readEnv(config.clientSecretEnv);
    if (secret === undefined || secret === '') throw tokenFailure(server, `${config.clientSecretEnv} is not set`);
    const form = new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: subject.token, subject_token_type: ACCESS_TOKEN_TYPE });
    const resource = config.resource ?? (config.audience === undefined ? options.upstreamUrl : undefined);
    if (resource !== undefined) form.set('resource', resource);
    if (config.audience !== undefined) form.set('audience', config.audience);
    if (config.scope !== undefined) form.set('scope', config.scope);
    // Counted from before the request, less a second: `exp` is in whole seconds (RFC 7519 §2).
    const issuedAt = now();
    const issued = await requestToken({ server, tokenUrl: config.tokenUrl, clientId: config.clientId, secret, form, fetch: options.fetch });
    const expiresAt = Math.min(issuedAt + (issued.lifetimeMs ?? DEFAULT_LIFETIME_MS) - EXP_GRANULARITY_MS, subject.expiresAt);
    // Short-lived tokens are renewed a quarter of their life ahead, long ones a minute ahead.
    const refreshAt = expiresAt - Math.min(REFRESH_AHEAD_MS, (expiresAt - issuedAt) / 4);
    const droppedAt = held.get(principal)?.droppedAt ?? Number.NEGATIVE_INFINITY;
    held.set(principal, { token: issued.token, subjectId: subject.id, expiresAt, refreshAt, dropped: false, droppedAt });
    return issued.token;
  }

  function exchangeOnce(principal: string, subject: SubjectToken): Promise<string> {
    const running = pending.get(principal);
    if (running !== undefined && running.subjectId === subject.id) return running.exchange;
    const started = exchange(principal, subject).finally(() => {
      if (pending.get(principal)?.exchange === started) pending.delete(principal);
    });
    pending.set(principal, { subjectId: subject.id, exchange: started });
    return started;
  }

  function tokenOf(principal: string): Promise<string> {
    const subject = subjects.current(principal);
    if (subject === undefined) {
      return Promise.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'the gateway holds no live access token of this caller to exchange for the upstream: authenticate again with a fresh token and retry'));
    }
    const at = now();
    const current = held.get(principal);
    const usable = current !== undefined && !current.dropped && current.subjectId === subject.id && current.expiresAt > at;
    if (usable && current.refreshAt > at) return Promise.resolve(current.token);
    const next = exchangeOnce(principal, subject);
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
    forPrincipal(principal) {
      if (principal === undefined) return nobody;
      return {
        token: () => tokenOf(principal),
        invalidate(token) {
          const current = held.peek(principal);
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
