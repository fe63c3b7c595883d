/**
 * The `auth` block of the gateway configuration: who may call the gateway at all (a non-loopback
 * listener needs it: docs/decisions.md, "Binding beyond loopback"). Two closed kinds:
 *
 * - `bearer`: static tokens, one per principal, each read from an environment variable named here
 *   (the secret never lives in a config file).
 * - `jwt`: signed access tokens from an identity provider, verified against a JWKS (a file, or a
 *   URL fetched through the egress guard), with issuer, audience and algorithms enforced.
 *
 * - `oauth`: an OAuth 2.1 resource server as the MCP authorization spec describes it (2025-11-25
 *   and 2026-07-28, "Authorization"): the gateway publishes protected resource metadata (RFC 9728)
 *   naming the configured authorization servers, discovers each issuer's metadata (RFC 8414 or
 *   OpenID Connect Discovery) and key set through the egress guard, and accepts a JWT access token
 *   (RFC 9068) only when its audience is the endpoint's own canonical URI (RFC 8707) and it holds
 *   the required scopes.
 *
 * Algorithms are asymmetric signatures only: `none` and the HMAC family are not in the enum, so an
 * `alg: none` token or the RS256→HS256 key-confusion attack (a token MACed with the public key)
 * cannot be configured into acceptance (RFC 8725 §2.1, §3.1).
 */
import { z } from 'zod';

/** JWS algorithms a JWKS-verified token may use: public-key signatures only (RFC 8725 §3.1). */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export const DEFAULT_JWT_ALGORITHMS: readonly JwtAlgorithm[] = Object.freeze(['RS256', 'ES256', 'EdDSA']);

/** A POSIX-style environment variable name; never the value. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const bearerAuthSchema = z.strictObject({
  kind: z.literal('bearer'),
  tokens: z
    .array(
      z.strictObject({
        /** The identity a request carrying this token acts as (sessions and audit lines name it). */
        principal: z.string().min(1),
        /** Name of the environment variable holding the token, read once at boot. */
        env: envName,
      }),
    )
    .min(1),
});

export const jwksFileSchema = z.strictObject({
  /** A JSON Web Key Set file of public keys, read once at boot. */
  file: z.string().min(1),
});

export const jwksUrlSchema = z.strictObject({
  /** `https:` (or `http:` to a loopback host with `allowPrivateNetwork`); fetched through the egress guard. */
  url: z.string().min(1),
  /** Let the key-set fetch reach loopback and private addresses (an in-house identity provider). */
  allowPrivateNetwork: z.boolean().default(false),
});

/** How a signed access token is verified, shared by `jwt` and `oauth`. */
const signedTokenRules = {
  algorithms: z
    .array(z.enum(JWT_ALGORITHMS))
    .min(1)
    .default(() => [...DEFAULT_JWT_ALGORITHMS]),
  /** The claim naming the principal; it must be a non-empty string. */
  principalClaim: z.string().min(1).default('sub'),
  /** Seconds of clock skew tolerated on `exp`, `nbf` and `iat`. */
  clockToleranceSec: z.number().int().min(0).max(300).default(30),
};

export const jwtAuthSchema = z.strictObject({
  kind: z.literal('jwt'),
  jwks: z.union([jwksFileSchema, jwksUrlSchema]),
  /** Exact `iss` every token must carry. */
  issuer: z.string().min(1),
  /** `aud` must contain this value (or one of these). */
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  ...signedTokenRules,
});

/** An OAuth scope token (RFC 6749 §3.3: printable ASCII but space, `"` and `\\`). */
const scopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be one OAuth scope (no spaces or quotes)');

export const oauthIssuerSchema = z.strictObject({
  /**
   * The authorization server's issuer identifier, exactly as its metadata and tokens state it.
   * No `#` (RFC 8414 §2 issuers have no fragment): with several issuers a principal is named
   * `<iss>#<claim>`, which a `#` in an issuer would make ambiguous.
   */
  issuer: z.string().min(1).refine((issuer) => !issuer.includes('#'), 'must not contain "#" (an issuer identifier has no fragment, and principals are named <issuer>#<claim>)'),
  /** Let metadata and key-set fetches reach loopback and private addresses (an in-house IdP). */
  allowPrivateNetwork: z.boolean().default(false),
});

export const oauthAuthSchema = z.strictObject({
  kind: z.literal('oauth'),
  /** The authorization servers whose tokens are accepted, listed in the protected resource metadata. */
  issuers: z.array(oauthIssuerSchema).min(1).max(8),
  /** Scopes every MCP endpoint requires; a token lacking one is answered 403 `insufficient_scope`. */
  scopes: z.array(scopeToken).max(32).default([]),
  ...signedTokenRules,
  /** A human-readable name for the protected resource metadata (`resource_name`). */
  resourceName: z.string().min(1).max(200).optional(),
});

export const authConfigSchema = z.discriminatedUnion('kind', [bearerAuthSchema, jwtAuthSchema, oauthAuthSchema]);

export type AuthConfig = z.infer<typeof authConfigSchema>;
export type AuthConfigInput = z.input<typeof authConfigSchema>;
export type BearerAuthConfig = z.infer<typeof bearerAuthSchema>;
export type JwtAuthConfig = z.infer<typeof jwtAuthSchema>;
export type JwksConfig = JwtAuthConfig['jwks'];
export type OAuthAuthConfig = z.infer<typeof oauthAuthSchema>;
export type OAuthIssuerConfig = OAuthAuthConfig['issuers'][number];
