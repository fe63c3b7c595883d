/**
 * The pure halves of `authRequired`: reading a `WWW-Authenticate` header (RFC 9110 §11.6.1) for
 * the challenge that names protected resource metadata, and checking the metadata document
 * (RFC 9728) before it is published.
 */
import { describe, expect, it } from 'vitest';
import { authChallengeOf, parseChallenges } from '../../src/upstream/auth-challenge.js';
import { readProtectedResourceMetadata } from '../../src/upstream/protected-resource.js';

const PRM = 'https://api.example/.well-known/oauth-protected-resource/mcp';

describe('authChallengeOf', () => {
  it.each([
    ['a bare 401 challenge', 401, `Bearer resource_metadata="${PRM}"`, { reason: 'required', resourceMetadata: PRM }],
    ['scopes from the challenge', 401, `Bearer resource_metadata="${PRM}", scope="a b a"`, { reason: 'required', resourceMetadata: PRM, scopes: ['a', 'b'] }],
    ['invalid_token is expired', 401, `Bearer error="invalid_token", resource_metadata="${PRM}"`, { reason: 'expired', resourceMetadata: PRM }],
    ['403 insufficient_scope', 403, `Bearer error="insufficient_scope", scope="write", resource_metadata="${PRM}"`, { reason: 'insufficientScope', resourceMetadata: PRM, scopes: ['write'] }],
    ['a token value, unquoted', 401, `Bearer resource_metadata=x, error=invalid_token, resource_metadata="${PRM}"`, undefined],
    ['escapes inside quotes', 401, `Bearer realm="a \\"b\\", c", resource_metadata="${PRM}"`, { reason: 'required', resourceMetadata: PRM }],
    ['the second challenge', 401, `Basic realm="x", Bearer resource_metadata="${PRM}"`, { reason: 'required', resourceMetadata: PRM }],
    ['after a token68 challenge', 401, `Negotiate abc==, Bearer resource_metadata="${PRM}"`, { reason: 'required', resourceMetadata: PRM }],
    ['case-insensitive names', 401, `bearer Resource_Metadata="${PRM}"`, { reason: 'required', resourceMetadata: PRM }],
  ])('reads %s', (_what, status, header, expected) => {
    expect(authChallengeOf(status, header)).toEqual(expected);
  });

  it.each([
    ['a 500', 500, `Bearer resource_metadata="${PRM}"`],
    ['no header', 401, null],
    ['no resource_metadata', 401, 'Bearer realm="x"'],
    ['a 403 that is not insufficient_scope', 403, `Bearer error="invalid_token", resource_metadata="${PRM}"`],
    ['plain-http metadata beyond loopback', 401, 'Bearer resource_metadata="http://api.example/prm"'],
    ['metadata URL with credentials', 401, 'Bearer resource_metadata="https://u:p@api.example/prm"'],
    ['metadata URL with a fragment', 401, 'Bearer resource_metadata="https://api.example/prm#x"'],
    ['a relative URL', 401, 'Bearer resource_metadata="/prm"'],
    ['an unterminated quote', 401, `Bearer resource_metadata="${PRM}`],
    ['an over-long header', 401, `Bearer resource_metadata="${PRM}", realm="${'x'.repeat(9000)}"`],
  ])('ignores %s', (_what, status, header) => {
    expect(authChallengeOf(status, header)).toBeUndefined();
  });

  it('accepts http metadata on loopback only', () => {
    expect(authChallengeOf(401, 'Bearer resource_metadata="http://127.0.0.1:9/prm"')?.resourceMetadata).toBe('http://127.0.0.1:9/prm');
    expect(authChallengeOf(401, 'Bearer resource_metadata="http://[::1]:9/prm"')?.resourceMetadata).toBe('http://[::1]:9/prm');
  });

  it('drops scopes that are not scope-tokens and keeps at most 32', () => {
    const many = Array.from({ length: 40 }, (_, i) => `s${i}`).join(' ');
    expect(authChallengeOf(401, `Bearer resource_metadata="${PRM}", scope="${many}"`)?.scopes).toHaveLength(32);
    expect(authChallengeOf(401, `Bearer resource_metadata="${PRM}", scope="ok bad\\"quote"`)?.scopes).toEqual(['ok']);
  });

  it('parses every challenge of a list', () => {
    expect(parseChallenges('Basic realm="a", Bearer error="x", scope="y"').map((c) => [c.scheme, Object.fromEntries(c.params)])).toEqual([
      ['basic', { realm: 'a' }],
      ['bearer', { error: 'x', scope: 'y' }],
    ]);
  });
});

describe('readProtectedResourceMetadata', () => {
  const upstream = 'https://api.example/mcp';

  it('keeps the registered fields of the right types and nothing else', () => {
    const verdict = readProtectedResourceMetadata(
      {
        resource: 'https://api.example/mcp',
        authorization_servers: ['https://as.example'],
        scopes_supported: ['a', 7],
        dpop_bound_access_tokens_required: true,
        resource_name: 'API',
        extra: { anything: true },
      },
      upstream,
    );
    expect(verdict).toEqual({ ok: true, metadata: { resource: 'https://api.example/mcp', authorization_servers: ['https://as.example'], dpop_bound_access_tokens_required: true, resource_name: 'API' } });
  });

  it('accepts a resource the upstream URL is inside', () => {
    expect(readProtectedResourceMetadata({ resource: 'https://api.example/' }, upstream).ok).toBe(true);
    expect(readProtectedResourceMetadata({ resource: 'https://api.example' }, 'https://api.example/v1/mcp').ok).toBe(true);
  });

  it.each([
    ['not an object', [], 'is not a JSON object'],
    ['no resource', {}, 'has no resource'],
    ['a resource that is not a URL', { resource: 'api' }, 'names a resource that is not a URL'],
    ['another origin', { resource: 'https://evil.example/mcp' }, 'names another resource than this server'],
    ['another path', { resource: 'https://api.example/other' }, 'names another resource than this server'],
    ['a sibling path prefix', { resource: 'https://api.example/mc' }, 'names another resource than this server'],
  ])('refuses %s, quoting nothing of it', (_what, document, why) => {
    expect(readProtectedResourceMetadata(document, upstream)).toEqual({ ok: false, why });
  });
});
