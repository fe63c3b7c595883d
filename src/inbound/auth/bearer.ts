/**
 * Static bearer tokens: each configured principal has a token held in an environment variable,
 * read once at boot. A presented token is compared with every configured one in constant time.
 *
 * Why digests: `timingSafeEqual` needs equal lengths, and comparing lengths first would tell an
 * attacker how long the token is. Comparing SHA-256 digests of both sides keeps every comparison
 * at 32 bytes, and every configured token is compared (no early exit), so the response time says
 * neither how much of a guess matched nor which entry it was checked against.
 *
 * Boot errors name the variable, never its value.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { BearerAuthConfig } from '../../config/auth-schema.js';
import { B64TOKEN, MAX_CLIENT_TOKEN_LENGTH } from '../../net/bearer-token.js';
import type { AuthDeps, TokenVerifier } from './token-verifier.js';

/** Below this length a static token is guessable enough to warn about at boot. */
const SHORT_TOKEN_LENGTH = 16;

interface CompiledToken {
  principal: string;
  digest: Buffer;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Read every token once and keep only its digest. Throws TypeError on a missing or unusable value. */
export function compileBearerVerifier(config: BearerAuthConfig, deps: AuthDeps): TokenVerifier {
  const logger = deps.logger;
  const seen = new Map<string, string>();
  const tokens: CompiledToken[] = config.tokens.map(({ principal, env }) => {
    const value = deps.readEnv(env);
    if (value === undefined || value === '') {
      throw new TypeError(`auth: environment variable ${env} (token of principal "${principal}") is not set or empty`);
    }
    if (value.length > MAX_CLIENT_TOKEN_LENGTH || !B64TOKEN.test(value)) {
      // A trailing newline from `$(cat file)` is the usual cause; such a token could never match.
      throw new TypeError(
        `auth: environment variable ${env} does not hold a valid bearer token (RFC 6750 b64token, at most ${MAX_CLIENT_TOKEN_LENGTH} characters, no whitespace)`,
      );
    }
    const hex = digest(value).toString('hex');
    const other = seen.get(hex);
    if (other !== undefined) {
      throw new TypeError(`auth: environment variables ${other} and ${env} hold the same token; each principal needs its own`);
    }
    seen.set(hex, env);
    if (value.length < SHORT_TOKEN_LENGTH) {
      logger.warn({ env, minLength: SHORT_TOKEN_LENGTH }, 'auth: a bearer token is short enough to guess');
    }
    return { principal, digest: digest(value) };
  });

  return {
    async verify(token) {
      const presented = digest(token);
      let principal: string | undefined;
      for (const entry of tokens) {
        if (timingSafeEqual(entry.digest, presented) && principal === undefined) principal = entry.principal;
      }
      return principal === undefined ? { ok: false, reason: 'unknown token' } : { ok: true, principal };
    },
    async close() {},
  };
}
