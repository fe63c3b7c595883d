import { describe, expect, it } from 'vitest';
import { readBearerToken } from '../../../src/inbound/auth/authorization-header.js';
import { MAX_CLIENT_TOKEN_LENGTH } from '../../../src/net/bearer-token.js';

describe('readBearerToken', () => {
  const vectors: readonly (readonly [string, readonly string[], string])[] = [
    ['a Bearer token', ['Bearer abc.DEF-_~+/=='], 'ok'],
    ['a lowercase scheme', ['bearer abc'], 'ok'],
    ['an uppercase scheme', ['BEARER abc'], 'ok'],
    ['several spaces after the scheme (1*SP)', ['Bearer   abc'], 'ok'],
    ['no header', [], 'AUTH_MISSING'],
    ['two header lines', ['Bearer abc', 'Bearer abc'], 'AUTH_MALFORMED'],
    ['two credentials joined by Fetch', ['Bearer abc, Bearer def'], 'AUTH_MALFORMED'],
    ['an empty value', [''], 'AUTH_MALFORMED'],
    ['the scheme alone', ['Bearer'], 'AUTH_MALFORMED'],
    ['the scheme and a space', ['Bearer '], 'AUTH_MALFORMED'],
    ['two tokens', ['Bearer abc def'], 'AUTH_MALFORMED'],
    ['a tab separator', ['Bearer\tabc'], 'AUTH_MALFORMED'],
    ['padding in the middle', ['Bearer ab=c'], 'AUTH_MALFORMED'],
    ['a character outside b64token', ['Bearer ab"c'], 'AUTH_MALFORMED'],
    ['the Basic scheme', ['Basic dXNlcjpwYXNz'], 'AUTH_MALFORMED'],
    ['a bare token without scheme', ['abc'], 'AUTH_MALFORMED'],
    ['a scheme glued to the token', ['Bearerabc'], 'AUTH_MALFORMED'],
    ['an over-long token', [`Bearer ${'a'.repeat(MAX_CLIENT_TOKEN_LENGTH + 1)}`], 'AUTH_MALFORMED'],
  ];

  it.each(vectors)('judges %s as %s', (_name, values, expected) => {
    const result = readBearerToken(values);
    expect(result.ok ? 'ok' : result.code).toBe(expected);
    if (!result.ok) {
      for (const value of values) {
        const token = value.split(/\s+/)[1];
        if (token !== undefined && token.length >= 3) expect(result.message).not.toContain(token.slice(0, 3));
      }
    }
  });

  it('returns the token itself', () => {
    expect(readBearerToken(['bearer tok.en'])).toEqual({ ok: true, token: 'tok.en' });
  });

  it('says whether Bearer was attempted (RFC 6750 §3.1 challenge without error code otherwise)', () => {
    expect(readBearerToken(['Basic abc'])).toMatchObject({ ok: false, bearerAttempted: false });
    expect(readBearerToken(['Bearer a b'])).toMatchObject({ ok: false, bearerAttempted: true });
    expect(readBearerToken([])).toMatchObject({ ok: false, bearerAttempted: false });
  });
});
