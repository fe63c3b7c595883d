/**
 * JWT access tokens (RFC 9068 profile, RFC 8725 best practice) verified with jose: signature
 * against the configured JWKS, `alg` from the configured asymmetric list only (so `none` and
 * HS256-with-the-public-key are refused), `iss` exact, `aud` containing the configured audience,
 * `exp` required, `nbf`/`iat` honoured, all with the configured clock tolerance. The principal is
 * the configured claim, which must be a non-empty string.
 *
 * Why each refusal is logged as a fixed reason: jose's errors carry the decoded payload, and a
 * token is a credential until it expires; neither reaches a log line or a client. A key set that
 * cannot be fetched is the gateway's trouble, not the client's: logged at warn, not debug.
 */
import { errors, jwtVerify, type JWTVerifyOptions } from 'jose';
import { GatewayError } from '../../errors.js';
import type { JwtAuthConfig } from '../../config/auth-schema.js';
import { compileJwksSource } from './jwks-source.js';
import type { AuthDeps, TokenVerdict, TokenVerifier } from './token-verifier.js';
import { tokenScopes } from './token-scopes.js';

const CLAIM_REASONS: Record<string, string> = {
  iss: 'wrong issuer',
  aud: 'wrong audience',
  nbf: 'not yet valid',
  iat: 'issued in the future',
  exp: 'expiry missing or invalid',
};

/** What a jose (or egress) error says about the token, as a fixed phrase; `keySet` marks our side. */
export function refusalReason(error: unknown): { reason: string; keySet: boolean } {
  if (error instanceof errors.JWTExpired) return { reason: 'expired', keySet: false };
  if (error instanceof errors.JWTClaimValidationFailed) {
    // Claim names come from jose's fixed checks and our options, never from the token; bounded anyway.
    const claim = /^[A-Za-z_]{1,32}$/.test(error.claim) ? error.claim : 'unknown';
    return { reason: CLAIM_REASONS[claim] ?? `claim ${claim} failed`, keySet: false };
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return { reason: 'bad signature', keySet: false };
  if (error instanceof errors.JOSEAlgNotAllowed) return { reason: 'algorithm not allowed', keySet: false };
  if (error instanceof errors.JOSENotSupported) return { reason: 'unsupported algorithm or key', keySet: false };
  if (error instanceof errors.JWKSNoMatchingKey) return { reason: 'no matching key', keySet: false };
  if (error instanceof errors.JWKSMultipleMatchingKeys) return { reason: 'several keys match', keySet: false };
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return { reason: 'malformed token', keySet: false };
  if (error instanceof errors.JWKSTimeout) return { reason: 'key set fetch timed out', keySet: true };
  if (error instanceof errors.JWKSInvalid) return { reason: 'key set invalid', keySet: true };
  if (error instanceof GatewayError) return { reason: `key set fetch failed (${error.code})`, keySet: true };
  if (error instanceof errors.JOSEError) return { reason: 'key set unavailable', keySet: true };
  return { reason: 'verification failed', keySet: true };
}

/** Compile the JWT verifier: key source, options and principal claim fixed at boot. */
export function compileJwtVerifier(config: JwtAuthConfig, deps: AuthDeps): TokenVerifier {
  const source = compileJwksSource(config.jwks, deps);
  const logger = deps.logger;
  const options: JWTVerifyOptions = Object.freeze({
    issuer: config.issuer,
    audience: typeof config.audience === 'string' ? config.audience : [...config.audience],
    algorithms: [...config.algorithms],
    clockTolerance: config.clockToleranceSec,
    requiredClaims: ['exp'],
  });
  const claim = config.principalClaim;

  return {
    async verify(token): Promise<TokenVerdict> {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, source.getKey, options));
      } catch (error) {
        const { reason, keySet } = refusalReason(error);
        if (keySet && source.remote) logger.warn({ reason }, 'auth: JWT key set unavailable');
        return { ok: false, reason };
      }
      const principal = payload[claim];
      if (typeof principal !== 'string' || principal === '') return { ok: false, reason: 'principal claim missing or not a string' };
      return { ok: true, principal, claims: Object.freeze({ ...payload }), scopes: tokenScopes(payload) };
    },
    close: () => source.close(),
  };
}
