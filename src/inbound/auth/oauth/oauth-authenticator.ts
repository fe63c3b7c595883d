/**
 * The `oauth` authenticator: the Authorization header's bearer token verified for the resource the
 * request addresses, with the challenges the MCP authorization spec asks of a resource server —
 * 401 with `resource_metadata` and `scope` when the token is missing or refused, 403
 * `insufficient_scope` naming the scopes to request when it lacks one (RFC 6750 §3.1, MCP
 * authorization "Scope Challenge Handling").
 */
import type { OAuthAuthConfig } from '../../../config/auth-schema.js';
import { readBearerToken, unreadableStatus } from '../authorization-header.js';
import type { AuthDeps } from '../token-verifier.js';
import type { Authenticator, AuthFailure, AuthFailureCode, AuthTarget } from '../authenticate.js';
import { oauthChallenge, type ChallengeError } from './challenge.js';
import { compileOAuthVerifier } from './oauth-verifier.js';

function failure(status: 400 | 401 | 403, code: AuthFailureCode, message: string, wwwAuthenticate: string): AuthFailure {
  return { ok: false, status, code, message, wwwAuthenticate };
}

export function compileOAuthAuthenticator(config: OAuthAuthConfig, deps: AuthDeps): Authenticator {
  const logger = deps.logger;
  const verifier = compileOAuthVerifier(config, deps);
  const required = config.scopes;

  return {
    kind: 'oauth',
    async authenticate(lines, target?: AuthTarget) {
      if (target === undefined) throw new TypeError('oauth authentication needs the request target');
      const challenge = (error?: ChallengeError) => oauthChallenge(target.metadataUrl, required, error);
      const read = readBearerToken(lines);
      if (!read.ok) {
        logger.debug({ code: read.code, reason: read.message }, 'request refused: no usable bearer credentials');
        return failure(unreadableStatus(read.bearerAttempted), read.code, read.message, challenge(read.bearerAttempted ? 'invalid_request' : undefined));
      }
      const verdict = await verifier.verify(read.token, target.resource);
      if (!verdict.ok) {
        if (verdict.keySet === true) logger.warn({ reason: verdict.reason }, 'auth: OAuth issuer keys unavailable');
        else logger.debug({ code: 'AUTH_INVALID', reason: verdict.reason }, 'request refused: access token not accepted');
        return failure(401, 'AUTH_INVALID', 'invalid access token', challenge('invalid_token'));
      }
      const missing = required.filter((scope) => !verdict.scopes.includes(scope));
      if (missing.length > 0) {
        logger.debug({ code: 'AUTH_SCOPE', missing }, 'request refused: access token lacks a required scope');
        return failure(403, 'AUTH_SCOPE', `the access token lacks the scope ${missing.join(' ')}`, challenge('insufficient_scope'));
      }
      return { ok: true, principal: verdict.principal, claims: verdict.claims, scopes: verdict.scopes };
    },
    close: () => verifier.close(),
  };
}
