/**
 * What every kind of inbound authentication compiles to: a function from a syntactically valid
 * bearer token to a principal, or to a reason that is safe to log (it never contains the token,
 * a claim value or a key).
 */
import type { Logger } from '../../observability/logger.js';

export type TokenVerdict =
  | { ok: true; principal: string; claims?: Readonly<Record<string, unknown>>; scopes?: readonly string[] }
  | { ok: false; reason: string };

export interface TokenVerifier {
  verify(token: string): Promise<TokenVerdict>;
  /** Release what the verifier holds (the JWKS connection pool). Idempotent. */
  close(): Promise<void>;
}

/** The `fetch` a remote JWKS is retrieved with (jose's `customFetch` shape). */
export type JwksFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface AuthDeps {
  /** The single reader of the environment, injected (config code owns `process.env`). */
  readEnv(name: string): string | undefined;
  logger: Logger;
  /** Replaces the egress-guarded fetch of a remote JWKS. Tests only. */
  fetchJwks?: JwksFetch;
}
