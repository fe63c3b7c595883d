/**
 * Inbound authentication compiled once from the `auth` config block: read the Authorization
 * header lines, verify the bearer token by the configured kind, and answer a principal or a 401
 * with its `WWW-Authenticate` challenge (RFC 6750 §3).
 *
 * Client-facing messages say what was wrong with the request's shape, never why a token was
 * refused (expired, wrong audience, bad signature): that tells an attacker which forgery came
 * closest. The reason goes to the debug log, without the token.
 */
import type { Logger } from '../../observability/logger.js';
import type { AuthConfig } from '../../config/auth-schema.js';
import { readBearerToken, unreadableStatus } from './authorization-header.js';
import { compileBearerVerifier } from './bearer.js';
import { compileJwtVerifier } from './jwt.js';
import type { AuthDeps, TokenVerifier } from './token-verifier.js';
import { compileOAuthAuthenticator } from './oauth/oauth-authenticator.js';

export type { AuthDeps, JwksFetch } from './token-verifier.js';

/** The realm every challenge names. */
export const AUTH_REALM = 'portcullis';

export type AuthFailureCode = 'AUTH_MISSING' | 'AUTH_MALFORMED' | 'AUTH_INVALID' | 'AUTH_SCOPE';

export interface AuthFailure {
  ok: false;
  /**
   * 401; 400 for malformed Bearer credentials (`invalid_request`, RFC 6750 §3.1; MCP 2025-11-25
   * Authorization, "Error Handling"); 403 for a valid token that lacks a required scope (`AUTH_SCOPE`).
   */
  status: 400 | 401 | 403;
  code: AuthFailureCode;
  /** Safe to show: never contains the token or any part of it. */
  message: string;
  /** The `WWW-Authenticate` header value to answer with. */
  wwwAuthenticate: string;
}

export interface AuthSuccess {
  ok: true;
  principal: string;
  /** The verified token's claims (`jwt` and `oauth`), for policy rules on claims such as `groups`. */
  claims?: Readonly<Record<string, unknown>>;
  /** The verified token's scopes (`oauth`). */
  scopes?: readonly string[];
}

export type AuthResult = AuthSuccess | AuthFailure;

/** The protected resource a request addresses (`oauth`: the token's audience must be it). */
export interface AuthTarget {
  /** The endpoint's canonical URI. */
  resource: string;
  /** Where its RFC 9728 metadata is served, named in every challenge. */
  metadataUrl: string;
}

export interface Authenticator {
  readonly kind: AuthConfig['kind'];
  /** Judge every Authorization header line of one request, as received; `oauth` needs `target`. */
  authenticate(authorizationHeaderValues: readonly string[], target?: AuthTarget): Promise<AuthResult>;
  /** Release network resources (a remote JWKS's connection pool). Idempotent. */
  close(): Promise<void>;
}

/**
 * RFC 6750 §3 / §3.1: no error code when the request carried no Bearer credentials (missing, or
 * another scheme); `invalid_request` when Bearer credentials were malformed or repeated;
 * `invalid_token` when a well-formed token was refused.
 */
function challenge(error?: 'invalid_request' | 'invalid_token'): string {
  return error === undefined ? `Bearer realm="${AUTH_REALM}"` : `Bearer realm="${AUTH_REALM}", error="${error}"`;
}

function failure(code: AuthFailureCode, message: string, wwwAuthenticate: string, status: 400 | 401 = 401): AuthFailure {
  return { ok: false, status, code, message, wwwAuthenticate };
}

function compileVerifier(config: Exclude<AuthConfig, { kind: 'oauth' }>, deps: AuthDeps): TokenVerifier {
  switch (config.kind) {
    case 'bearer':
      return compileBearerVerifier(config, deps);
    case 'jwt':
      return compileJwtVerifier(config, deps);
    default: {
      const unknown: never = config;
      throw new TypeError(`auth: unknown kind ${JSON.stringify((unknown as { kind?: unknown }).kind)}`);
    }
  }
}

/**
 * Compile the authenticator at boot: bearer tokens are read from the environment now, a JWKS file
 * is read and parsed now, a JWKS URL is checked now (fetched on first use). Throws TypeError on
 * any problem, naming the variable or field but never a secret.
 */
export function compileAuthenticator(config: AuthConfig, deps: AuthDeps): Authenticator {
  const logger: Logger = deps.logger.child({ component: 'auth' });
  if (config.kind === 'oauth') return compileOAuthAuthenticator(config, { ...deps, logger });
  const verifier = compileVerifier(config, { ...deps, logger });

  return {
    kind: config.kind,
    async authenticate(authorizationHeaderValues) {
      const read = readBearerToken(authorizationHeaderValues);
      if (!read.ok) {
        logger.debug({ code: read.code, reason: read.message }, 'request refused: no usable bearer credentials');
        const error = read.bearerAttempted ? 'invalid_request' : undefined;
        return failure(read.code, read.message, challenge(error), unreadableStatus(read.bearerAttempted));
      }
      const verdict = await verifier.verify(read.token);
      if (!verdict.ok) {
        logger.debug({ code: 'AUTH_INVALID', reason: verdict.reason }, 'request refused: bearer token not accepted');
        return failure('AUTH_INVALID', 'invalid bearer token', challenge('invalid_token'));
      }
      return {
        ok: true,
        principal: verdict.principal,
        ...(verdict.claims === undefined ? {} : { claims: verdict.claims }),
        ...(verdict.scopes === undefined ? {} : { scopes: verdict.scopes }),
      };
    },
    close: () => verifier.close(),
  };
}
