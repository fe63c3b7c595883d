/**
 * Verifying an OAuth access token for one protected resource: a JWT access token (RFC 9068) from
 * one of the configured issuers, its signature checked against that issuer's key set (found via
 * its metadata, fetched through the egress guard), `iss` exact, `exp` required, and `aud`
 * containing the endpoint's own resource URI (RFC 8707; MCP authorization "Token Audience
 * Binding and Validation": a token for another resource — another endpoint of this gateway
 * included — is refused). Scopes come from `scope` (RFC 9068 §2.2.3, space-separated) or `scp`.
 *
 * Which issuer's keys to use is read from the token's unverified `iss`, and only ever selects
 * among the configured issuers: a token naming any other issuer is refused before any fetch, so
 * a client cannot point the gateway at a key set of its choosing.
 *
 * Reasons are fixed phrases (safe to log, never the token or a claim value).
 */
import { decodeJwt, jwtVerify } from 'jose';
import type { OAuthAuthConfig } from '../../../config/auth-schema.js';
import { createEgressDispatcher, createGuardedFetch } from '../../../net/egress-guard.js';
import { compileJwksSource, MAX_JWKS_BYTES, type JwksSource } from '../jwks-source.js';
import { refusalReason } from '../jwt.js';
import { tokenScopes } from '../token-scopes.js';
import type { AuthDeps } from '../token-verifier.js';
import { createIssuerDiscovery, type IssuerDiscovery } from './issuer-metadata.js';

export type OAuthVerdict =
  | { ok: true; principal: string; scopes: readonly string[]; claims: Readonly<Record<string, unknown>> }
  | { ok: false; reason: string; keySet?: boolean };

export interface OAuthVerifier {
  verify(token: string, resource: string): Promise<OAuthVerdict>;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;

interface Issuer {
  discovery: IssuerDiscovery;
  keys: Promise<JwksSource> | undefined;
  allowPrivateNetwork: boolean;
  fetch: AuthDeps['fetchJwks'];
  close(): Promise<void>;
}

export function compileOAuthVerifier(config: OAuthAuthConfig, deps: AuthDeps): OAuthVerifier {
  const issuers = new Map<string, Issuer>();
  for (const entry of config.issuers) {
    let fetch = deps.fetchJwks;
    let close = async (): Promise<void> => {};
    if (fetch === undefined) {
      const dispatcher = createEgressDispatcher({
        server: 'auth-oauth',
        allowPrivateNetwork: entry.allowPrivateNetwork,
        allowPublic: new URL(entry.issuer).protocol === 'https:',
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        logger: deps.logger,
      });
      fetch = createGuardedFetch({
        server: 'auth-oauth',
        dispatcher,
        logger: deps.logger,
        limits: { maxMessageBytes: MAX_JWKS_BYTES, maxOtherBodyBytes: MAX_JWKS_BYTES },
      });
      let closed: Promise<void> | undefined;
      close = () => (closed ??= dispatcher.close().catch(() => undefined));
    }
    issuers.set(entry.issuer, {
      discovery: createIssuerDiscovery({ issuer: entry.issuer, fetch, plaintextBeyondLoopback: entry.allowPrivateNetwork }),
      keys: undefined,
      allowPrivateNetwork: entry.allowPrivateNetwork,
      fetch,
      close,
    });
  }
  const multiIssuer = config.issuers.length > 1;
  const options = {
    algorithms: [...config.algorithms],
    clockTolerance: config.clockToleranceSec,
    requiredClaims: ['exp'],
  };

  function keysOf(issuer: Issuer): Promise<JwksSource> {
    if (issuer.keys !== undefined) return issuer.keys;
    const keys = issuer.discovery.get().then((metadata) =>
      compileJwksSource({ url: metadata.jwksUri, allowPrivateNetwork: issuer.allowPrivateNetwork }, { ...deps, fetchJwks: issuer.fetch }),
    );
    issuer.keys = keys;
    // A failed discovery is not remembered here: the discovery's own cooldown decides the retry.
    keys.catch(() => {
      if (issuer.keys === keys) issuer.keys = undefined;
    });
    return keys;
  }

  return {
    async verify(token, resource) {
      let iss: unknown;
      try {
        iss = decodeJwt(token).iss;
      } catch {
        return { ok: false, reason: 'not a JWT access token' };
      }
      const issuer = typeof iss === 'string' ? issuers.get(iss) : undefined;
      if (issuer === undefined) return { ok: false, reason: 'issuer not configured' };
      let keys: JwksSource;
      try {
        keys = await keysOf(issuer);
      } catch (error) {
        return { ok: false, reason: `issuer metadata unavailable (${error instanceof Error ? error.message : 'unknown'})`, keySet: true };
      }
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, keys.getKey, { ...options, issuer: iss as string, audience: resource }));
      } catch (error) {
        return { ok: false, ...refusalReason(error) };
      }
      const claimed = payload[config.principalClaim];
      if (typeof claimed !== 'string' || claimed === '') return { ok: false, reason: 'principal claim missing or not a string' };
      // Two issuers may hand out the same `sub` (or e-mail) to different people: with several,
      // the principal names its issuer, so nothing keyed by principal crosses between them.
      const principal = multiIssuer ? `${iss as string}#${claimed}` : claimed;
      return { ok: true, principal, scopes: tokenScopes(payload), claims: Object.freeze({ ...payload }) };
    },
    async close() {
      await Promise.all(
        [...issuers.values()].map(async (issuer) => {
          const keys = issuer.keys;
          if (keys !== undefined) await keys.then((k) => k.close()).catch(() => undefined);
          await issuer.close();
        }),
      );
    },
  };
}
