import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { authConfigSchema, type AuthConfigInput } from '../../../src/config/auth-schema.js';
import { compileAuthenticator, type Authenticator } from '../../../src/inbound/auth/authenticate.js';
import { captureLog, leaks, type CapturedLog } from './capture-log.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'portcullis';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(alg: 'RS256' | 'ES256' | 'EdDSA', kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, jwk };
}

const now = (): number => Math.floor(Date.now() / 1000);

async function sign(key: SigningKey, claims: JWTPayload = {}, options: { omitExp?: boolean } = {}): Promise<string> {
  const jwt = new SignJWT({ sub: 'user-1', ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt();
  if (!options.omitExp) jwt.setExpirationTime(now() + 300);
  if (claims.iss !== undefined) jwt.setIssuer(claims.iss);
  if (claims.aud !== undefined) jwt.setAudience(claims.aud);
  if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
  return jwt.sign(key.privateKey);
}

/** `alg: none`, otherwise a perfect token (RFC 8725 §2.1). */
async function unsigned(): Promise<string> {
  return new UnsecuredJWT({ sub: 'root' }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').encode();
}

/** HS256 MACed with the RSA public key's JWK text: the classic RS256→HS256 confusion. */
async function hs256(): Promise<string> {
  const secret = new TextEncoder().encode(JSON.stringify(rsa.jwk));
  return new SignJWT({ sub: 'root' })
    .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime('5m')
    .sign(secret);
}

let dir: string;
let rsa: SigningKey;
let ec: SigningKey;
let ed: SigningKey;
/** Same kid as `rsa`, never published. */
let impostor: SigningKey;
let jwksFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portcullis-jwt-'));
  rsa = await signingKey('RS256', 'rsa-1');
  ec = await signingKey('ES256', 'ec-1');
  ed = await signingKey('EdDSA', 'ed-1');
  impostor = await signingKey('RS256', 'rsa-1');
  jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [rsa.jwk, ec.jwk, ed.jwk] }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type JwtOverrides = Partial<Extract<AuthConfigInput, { kind: 'jwt' }>>;

function authenticatorFor(overrides: JwtOverrides = {}): { authenticator: Authenticator; log: CapturedLog } {
  const log = captureLog();
  const config = authConfigSchema.parse({ kind: 'jwt', jwks: { file: jwksFile }, issuer: ISSUER, audience: AUDIENCE, ...overrides });
  return { authenticator: compileAuthenticator(config, { readEnv: () => undefined, logger: log.logger }), log };
}

function refusalReasons(log: CapturedLog): unknown[] {
  return log.lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.code === 'AUTH_INVALID')
    .map((line) => line.reason);
}

describe('JWT authentication with a JWKS file', () => {
  it('accepts a valid RS256, ES256 and EdDSA token and names the sub as principal', async () => {
    const { authenticator, log } = authenticatorFor();
    for (const key of [rsa, ec, ed]) {
      expect(await authenticator.authenticate([`Bearer ${await sign(key)}`])).toMatchObject({ ok: true, principal: 'user-1', claims: expect.objectContaining({ sub: expect.any(String) }) });
    }
    expect(log.lines.filter((l) => l.includes('AUTH_'))).toEqual([]);
  });

  type Case = [name: string, token: () => Promise<string>, reason: string, overrides: JwtOverrides];
  const refused: Case[] = [
    ['an expired token', () => sign(rsa, { exp: now() - 120 }), 'expired', {}],
    ['a token from another issuer', () => sign(rsa, { iss: 'https://evil.example.test/' }), 'wrong issuer', {}],
    ['a token for another audience', () => sign(rsa, { aud: 'someone-else' }), 'wrong audience', {}],
    ['a token signed by an unpublished key with a published kid', () => sign(impostor), 'bad signature', {}],
    ['a token whose kid is unknown', () => sign({ ...impostor, kid: 'nobody' }), 'no matching key', {}],
    ['an unsigned token (alg none)', unsigned, 'algorithm not allowed', {}],
    ['an HS256 token (key confusion)', hs256, 'algorithm not allowed', {}],
    ['an algorithm the config does not list', () => sign(rsa), 'algorithm not allowed', { algorithms: ['ES256'] }],
    ['a token without the principal claim', () => sign(rsa, { sub: undefined }), 'principal claim missing or not a string', {}],
    ['a token whose principal claim is not a string', () => sign(rsa, { email: 42 }), 'principal claim missing or not a string', { principalClaim: 'email' }],
    ['a token whose principal claim is empty', () => sign(rsa, { sub: '' }), 'principal claim missing or not a string', {}],
    ['a token without exp', () => sign(rsa, {}, { omitExp: true }), 'expiry missing or invalid', {}],
    ['a token not yet valid', () => sign(rsa, { nbf: now() + 3600 }), 'not yet valid', {}],
    ['garbage in JWT shape', async () => 'abc.def.ghi', 'malformed token', {}],
  ];

  it.each(refused)('refuses %s with 401 and logs why, without the token', async (_name, token, reason, overrides) => {
    const { authenticator, log } = authenticatorFor(overrides);
    const jwt = await token();
    const result = await authenticator.authenticate([`Bearer ${jwt}`]);
    expect(result).toEqual({
      ok: false,
      status: 401,
      code: 'AUTH_INVALID',
      message: 'invalid bearer token',
      wwwAuthenticate: 'Bearer realm="portcullis", error="invalid_token"',
    });
    expect(refusalReasons(log)).toEqual([reason]);
    const parts = jwt.split('.').filter((part) => part.length >= 8);
    expect(leaks(log.lines, [jwt, ...parts])).toBeUndefined();
  });

  it('tolerates clock skew within clockToleranceSec', async () => {
    const { authenticator } = authenticatorFor({ clockToleranceSec: 60 });
    expect(await authenticator.authenticate([`Bearer ${await sign(rsa, { exp: now() - 10 })}`])).toMatchObject({ ok: true });
  });

  it('accepts a token whose aud is any configured audience', async () => {
    const { authenticator } = authenticatorFor({ audience: ['other', AUDIENCE] });
    expect(await authenticator.authenticate([`Bearer ${await sign(ec)}`])).toMatchObject({ ok: true });
  });

  it('names the principal by the configured claim', async () => {
    const { authenticator } = authenticatorFor({ principalClaim: 'email' });
    const result = await authenticator.authenticate([`Bearer ${await sign(ed, { email: 'ada@example.test' })}`]);
    expect(result).toMatchObject({ ok: true, principal: 'ada@example.test', claims: expect.objectContaining({ sub: expect.any(String) }) });
  });

  const bootFailures: readonly (readonly [string, () => string, RegExp])[] = [
    ['a missing file', () => join(dir, 'absent.json'), /auth\.jwks\.file could not be read \(ENOENT\)/],
    ['a file that is not JSON', () => write('not-json.json', '{ "keys": ['), /not valid JSON/],
    ['an empty key set', () => write('empty.json', JSON.stringify({ keys: [] })), /at least one key/],
    ['a set holding a private key', () => write('private.json', JSON.stringify({ keys: [{ ...rsa.jwk, d: 'AAAA' }] })), /private key/],
    ['a set holding a symmetric key', () => write('oct.json', JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] })), /symmetric/],
    ['a set with an unusable key', () => write('bad.json', JSON.stringify({ keys: 'nope' })), /at least one key/],
  ];

  function write(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  it.each(bootFailures)('refuses to boot with %s', (_name, file, pattern) => {
    const config = authConfigSchema.parse({ kind: 'jwt', jwks: { file: file() }, issuer: ISSUER, audience: AUDIENCE });
    expect(() => compileAuthenticator(config, { readEnv: () => undefined, logger: captureLog().logger })).toThrow(pattern);
  });
});
