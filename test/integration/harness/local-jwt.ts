/**
 * A local JWT issuer for tests of `auth.kind: "jwt"`: an ES256 key pair whose public half is a
 * JWKS file in `dir`, the `auth` block that trusts it, and a minter of access tokens with `groups`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export interface LocalJwtIssuer {
  /** The gateway's `auth` block trusting this issuer for `audience`. */
  readonly auth: Record<string, unknown>;
  /** A signed access token for `sub` with `groups`, valid for ten minutes. */
  token(sub: string, groups: string[]): Promise<string>;
}

export async function localJwtIssuer(dir: string, issuer: string, audience: string): Promise<LocalJwtIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }));
  return {
    auth: { kind: 'jwt', jwks: { file: jwks }, issuer, audience, algorithms: ['ES256'] },
    token: (sub, groups) =>
      new SignJWT({ groups }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(issuer).setAudience(audience).setSubject(sub).setExpirationTime('10m').sign(privateKey),
  };
}
