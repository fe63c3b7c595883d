/**
 * The latest verified inbound access token of each authenticated principal, kept only for
 * `upstreamAuth.kind: "tokenExchange"` (token-exchange.ts): the edge records it where
 * authentication succeeds (inbound/auth/), the exchange reads it as its RFC 8693 `subject_token`.
 * Nothing else reads it; it is never logged, never part of an error, never sent to an upstream.
 *
 * Bounded: at most `maxPrincipals` entries and `maxBytes` of token text, least recently
 * authenticated out first; each entry lapses with its token's `exp` (a token without one is kept
 * `defaultTtlMs`), so an expired token is never exchanged. A principal without a live entry gets
 * `undefined`, and its call fails asking it to authenticate again (never a hang).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface SubjectToken {
  readonly token: string;
  /** A digest of the token: what an exchanged token is bound to, compared instead of the text. */
  readonly id: string;
  /** When the token expires (epoch ms). */
  readonly expiresAt: number;
}

export interface SubjectTokensOptions {
  maxPrincipals?: number;
  maxBytes?: number;
  /** How long a token with no `exp` is kept. */
  defaultTtlMs?: number;
  now?: () => number;
}

export const DEFAULT_MAX_SUBJECT_PRINCIPALS = 10_000;
export const DEFAULT_MAX_SUBJECT_BYTES = 32 * 1024 * 1024;
/** Longer than any access token this gateway accepts is refused as a subject (never stored). */
const MAX_TOKEN_LENGTH = 16 * 1024;
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
    });
  }

  /** Entries held now (expired ones not yet evicted included). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Records `token` as `principal`'s latest, verified by authentication with expiry `exp` (JWT
   * seconds since the epoch; absent: `defaultTtlMs`). An expired or oversized token is not kept.
   */
  remember(principal: string, token: string, exp: unknown): void {
    const at = this.now();
    const expiresAt = typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : at + this.defaultTtlMs;
    if (expiresAt <= at || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return;
    const held = this.entries.get(principal);
    if (held?.token === token) return;
    this.entries.set(principal, { token, id: createHash('sha256').update(token).digest('base64url'), expiresAt });
  }

  /** `principal`'s live token, or undefined (none recorded, evicted, or expired). */
  current(principal: string): SubjectToken | undefined {
    const entry = this.entries.get(principal);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(principal);
      return undefined;
    }
    return entry;
  }
}
