/**
 * The callers' verified inbound access tokens, kept only for `upstreamAuth.kind: "tokenExchange"`
 * (token-exchange.ts), which exchanges them as RFC 8693 `subject_token`s. Nothing else reads them;
 * they are never logged, never part of an error, never sent to an upstream.
 *
 * The subject of a call is the token of the request that carries it: the edge (inbound/auth/)
 * runs the rest of each authenticated request inside {@link SubjectTokens.run}, an
 * `AsyncLocalStorage` context holding that request's token, and the upstream fetch of a call
 * runs inside it (both eras). One principal may present several tokens at once — a desktop
 * client with `crm:read crm:write`, an agent of the same user with `crm:read` — and each request
 * is exchanged for its own, never for whichever authenticated last.
 *
 * Each principal's latest token is also kept, for traffic no request owns (a connection's own
 * stream, opened or reconnected outside any call): bounded by `maxPrincipals` entries and
 * `maxBytes` of token text, least recently authenticated out first; each entry lapses at its
 * token's `exp` (a token without one is kept `defaultTtlMs`), so an expired token is never
 * exchanged. A caller with no live token gets `undefined`, and its call fails asking it to
 * authenticate again (never a hang).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface SubjectToken {
  readonly token: string;
  /** A digest of the token: what an exchanged token is bound to, compared instead of the text. */
  readonly id: string;
  /** When the token expires (epoch ms). */
  readonly expiresAt: number;
  /** The verified `iss` of the token (undefined: it named none). */
  readonly issuer: string | undefined;
}

export interface SubjectTokensOptions {
  maxPrincipals?: number;
  maxBytes?: number;
  /** How long a token with no `exp` is kept. */
  defaultTtlMs?: number;
  now?: () => number;
}

/** The verified claims the store reads: `exp` (JWT seconds since the epoch) and `iss`. */
export interface SubjectClaims {
  readonly exp?: unknown;
  readonly iss?: unknown;
}

/** Whose request is under way, and its subject (undefined: its token cannot be exchanged). */
interface RequestSubject {
  readonly principal: string;
  readonly subject: SubjectToken | undefined;
}

/** One context for every store: which request's token is the subject (the edge sets it). */
const requestSubject = new AsyncLocalStorage<RequestSubject>();

/**
 * Runs `work` as traffic no request owns: a connection's own GET stream, which the SDK opens (and
 * reconnects) inside the context of whichever request opened the connection, and which must not
 * go on carrying that request's token once it lapses. Its subject is the principal's latest.
 */
export function outsideAnyRequest<T>(work: () => T): T {
  return requestSubject.exit(work);
}

const DEFAULT_MAX_SUBJECT_PRINCIPALS = 10_000;
/**
 * The tokens' bytes held in all. Each token is a client's bearer token the inbound header reader
 * accepted, so already at most `MAX_CLIENT_TOKEN_LENGTH` (net/bearer-token.ts); no entry can
 * outgrow this bound either way (the cache refuses one larger than it).
 */
const DEFAULT_MAX_SUBJECT_BYTES = 32 * 1024 * 1024;
const DEFAULT_TTL_MS = 5 * 60_000;

export class SubjectTokens {
  private readonly entries: LRUCache<string, SubjectToken>;
  private readonly now: () => number;
  private readonly defaultTtlMs: number;

  constructor(options: SubjectTokensOptions = {}) {
    this.now = options.now ?? Date.now;
    this.defaultTtlMs = options.defaultTtlMs ?? DEFAULT_TTL_MS;
    this.entries = new LRUCache<string, SubjectToken>({
      max: options.maxPrincipals ?? DEFAULT_MAX_SUBJECT_PRINCIPALS,
      maxSize: options.maxBytes ?? DEFAULT_MAX_SUBJECT_BYTES,
      sizeCalculation: (entry, principal) => entry.token.length + principal.length,
      // Each entry's own lifetime (set per entry): gone at its token's `exp`, not merely skipped.
      ttlAutopurge: true,
      perf: { now: () => this.now() },
    });
  }

  /** Entries held now: those past their `exp` are let go first (autopurge's timer may run late under load). */
  get size(): number {
    this.entries.purgeStale();
    return this.entries.size;
  }

  /**
   * Runs `work` (the rest of one authenticated request) with `token` as the subject of every
   * exchange made inside it, and records it as `principal`'s latest. `token` undefined (a request
   * that carries none, forwarded by a peer replica): nothing is exchanged inside it.
   */
  run<T>(principal: string, token: string | undefined, claims: SubjectClaims, work: () => T): T {
    // The principal's usual token again (most requests): no new digest; `get` marks it recent.
    const held = this.entries.get(principal);
    const subject = token === undefined ? undefined : held?.token === token ? held : this.subjectOf(token, claims);
    if (subject !== undefined && subject !== held) this.keep(principal, subject);
    return requestSubject.run({ principal, subject }, work);
  }

  /**
   * The subject to exchange for `principal` now: the token of the request under way when it is
   * that principal's (undefined when that token is no longer live — never another of its tokens),
   * else the principal's latest live token (traffic no request owns), else undefined.
   */
  current(principal: string): SubjectToken | undefined {
    const request = requestSubject.getStore();
    if (request !== undefined && request.principal === principal) {
      return request.subject !== undefined && request.subject.expiresAt > this.now() ? request.subject : undefined;
    }
    const entry = this.entries.get(principal);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(principal);
      return undefined;
    }
    return entry;
  }

  private subjectOf(token: string, claims: SubjectClaims): SubjectToken | undefined {
    const at = this.now();
    const expiresAt = typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : at + this.defaultTtlMs;
    if (expiresAt <= at || token.length === 0) return undefined;
    const issuer = typeof claims.iss === 'string' ? claims.iss : undefined;
    return { token, id: createHash('sha256').update(token).digest('base64url'), expiresAt, issuer };
  }

  private keep(principal: string, subject: SubjectToken): void {
    this.entries.set(principal, subject, { ttl: Math.max(1, subject.expiresAt - this.now()) });
  }
}
