/**
 * What the schema accepts for `upstreamAuth.kind: "tokenExchange"` (docs/authorization.md,
 * "Per-principal tokens"): a principal-isolated server behind inbound `jwt` or `oauth`, one named
 * inbound issuer whose tokens its token endpoint exchanges, no Authorization header beside it, a
 * client secret the policy lets it read; and no `#` in an oauth issuer.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';

describe('configuration', () => {
  const entry = { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', isolation: 'principal', upstreamAuth: { kind: 'tokenExchange', tokenUrl: 'https://idp.example.com/token', clientId: 'gw', clientSecretEnv: 'EXCHANGE_SECRET' } };
  const jwt = { kind: 'jwt', jwks: { url: 'https://idp.example.com/jwks' }, issuer: 'https://idp.example.com', audience: 'https://gw.example.com/mcp' };

  it('accepts tokenExchange on a principal-isolated server behind jwt auth', () => {
    expect(parseConfig({ auth: jwt, servers: { a: entry } }).servers.a).toMatchObject({ upstreamAuth: { kind: 'tokenExchange' } });
  });

  it('refuses tokenExchange on a server whose connections are shared or pooled', () => {
    for (const isolation of ['session', 'shared']) {
      expect(() => parseConfig({ auth: jwt, servers: { a: { ...entry, isolation } } })).toThrow(/servers\.a\.upstreamAuth: the token exchange needs "isolation": "principal"/);
    }
  });

  it('refuses tokenExchange without inbound auth that yields a token to exchange', () => {
    expect(() => parseConfig({ servers: { a: entry } })).toThrow(/servers\.a\.upstreamAuth: the token exchange needs inbound "auth" of kind "oauth" or "jwt" \(there is none\)/);
    const bearer = { kind: 'bearer', tokens: [{ principal: 'p', env: 'P_TOKEN' }] };
    expect(() => parseConfig({ auth: bearer, servers: { a: entry } })).toThrow(/"bearer" is a shared secret/);
  });

  it('refuses an Authorization header beside it and a plaintext token endpoint on the internet', () => {
    expect(() => parseConfig({ auth: jwt, servers: { a: { ...entry, headers: { Authorization: 'Bearer x' } } } })).toThrow(/cannot be combined with an Authorization header/);
    expect(() => parseConfig({ auth: jwt, servers: { a: { ...entry, upstreamAuth: { ...entry.upstreamAuth, tokenUrl: 'http://idp.example.com/token' } } } })).toThrow(/servers\.a\.upstreamAuth\.tokenUrl/);
  });

  it('names the inbound issuer whose tokens it exchanges: required with several oauth issuers, one of them when given', () => {
    const oauth = (issuers: string[]) => ({ kind: 'oauth', issuers: issuers.map((issuer) => ({ issuer })) });
    const two = oauth(['https://idp-a.example.com', 'https://idp-b.example.com']);
    expect(() => parseConfig({ auth: two, servers: { a: entry } })).toThrow(
      /servers\.a\.upstreamAuth\.issuer: required when inbound "oauth" lists several issuers \(https:\/\/idp-a\.example\.com, https:\/\/idp-b\.example\.com\)/,
    );
    const named = { ...entry, upstreamAuth: { ...entry.upstreamAuth, issuer: 'https://idp-b.example.com' } };
    expect(parseConfig({ auth: two, servers: { a: named } }).servers.a).toMatchObject({ upstreamAuth: { issuer: 'https://idp-b.example.com' } });
    // One issuer (oauth or jwt) is implied; naming another is refused.
    expect(parseConfig({ auth: oauth(['https://idp-a.example.com']), servers: { a: entry } }).servers.a).toMatchObject({ upstreamAuth: { kind: 'tokenExchange' } });
    expect(() => parseConfig({ auth: jwt, servers: { a: named } })).toThrow(/servers\.a\.upstreamAuth\.issuer: must be an issuer of inbound "auth" \(https:\/\/idp\.example\.com\)/);
  });

  it('refuses an oauth issuer with "#", which would make <issuer>#<claim> principal names collide', () => {
    const hashed = { kind: 'oauth', issuers: [{ issuer: 'https://idp.example.com/t#a' }, { issuer: 'https://idp.example.com/t' }] };
    expect(() => parseConfig({ auth: hashed, servers: {} })).toThrow(/auth\.issuers\.0\.issuer: must not contain "#"/);
  });

  it('holds its client secret to the policy as an envHeaders variable is held', () => {
    // The same rule as clientCredentials (config/gateway-client.ts): a cloud credential is not read.
    expect(() => parseConfig({ auth: jwt, servers: { a: { ...entry, upstreamAuth: { ...entry.upstreamAuth, clientSecretEnv: 'AWS_SECRET_ACCESS_KEY' } } } })).toThrow(
      /servers\.a\.upstreamAuth\.clientSecretEnv: the policy does not allow reading this variable/,
    );
  });
});
