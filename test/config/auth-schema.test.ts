import { describe, expect, it } from 'vitest';
import { authConfigSchema } from '../../src/config/auth-schema.js';

const jwtBase = { kind: 'jwt', issuer: 'https://idp.example.com/', audience: 'portcullis', jwks: { file: 'keys.json' } };

describe('authConfigSchema', () => {
  const accepted: readonly (readonly [string, unknown])[] = [
    ['bearer tokens', { kind: 'bearer', tokens: [{ principal: 'alice', env: 'ALICE_TOKEN' }] }],
    ['two tokens for one principal (rotation)', { kind: 'bearer', tokens: [{ principal: 'a', env: 'A1' }, { principal: 'a', env: 'A2' }] }],
    ['jwt with a JWKS file', jwtBase],
    ['jwt with a JWKS url', { ...jwtBase, jwks: { url: 'https://idp.example.com/jwks.json' } }],
    ['jwt with several audiences', { ...jwtBase, audience: ['a', 'b'] }],
    ['jwt with chosen algorithms', { ...jwtBase, algorithms: ['PS256', 'ES384'] }],
  ];

  it.each(accepted)('accepts %s', (_name, input) => {
    expect(authConfigSchema.safeParse(input).success).toBe(true);
  });

  const refused: readonly (readonly [string, unknown])[] = [
    ['an unknown kind', { kind: 'basic', tokens: [] }],
    ['bearer without tokens', { kind: 'bearer', tokens: [] }],
    ['a token value inline', { kind: 'bearer', tokens: [{ principal: 'a', env: 'A', value: 'x' }] }],
    ['an env entry that is not a variable name', { kind: 'bearer', tokens: [{ principal: 'a', env: 'A-B' }] }],
    ['an empty principal', { kind: 'bearer', tokens: [{ principal: '', env: 'A' }] }],
    ['alg none', { ...jwtBase, algorithms: ['none'] }],
    ['an HMAC algorithm', { ...jwtBase, algorithms: ['HS256'] }],
    ['no algorithms', { ...jwtBase, algorithms: [] }],
    ['no issuer', { ...jwtBase, issuer: undefined }],
    ['an empty audience list', { ...jwtBase, audience: [] }],
    ['a JWKS with both file and url', { ...jwtBase, jwks: { file: 'k.json', url: 'https://idp.example.com/' } }],
    ['allowPrivateNetwork on a file', { ...jwtBase, jwks: { file: 'k.json', allowPrivateNetwork: true } }],
    ['a negative clock tolerance', { ...jwtBase, clockToleranceSec: -1 }],
    ['an unknown key', { ...jwtBase, extra: true }],
  ];

  it.each(refused)('refuses %s', (_name, input) => {
    expect(authConfigSchema.safeParse(input).success).toBe(false);
  });

  it('fills the JWT defaults', () => {
    const parsed = authConfigSchema.parse(jwtBase);
    expect(parsed).toMatchObject({ algorithms: ['RS256', 'ES256', 'EdDSA'], principalClaim: 'sub', clockToleranceSec: 30 });
    const remote = authConfigSchema.parse({ ...jwtBase, jwks: { url: 'https://idp.example.com/jwks.json' } });
    expect(remote.kind === 'jwt' && remote.jwks).toEqual({ url: 'https://idp.example.com/jwks.json', allowPrivateNetwork: false });
  });
});
