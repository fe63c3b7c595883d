/**
 * The pure parts of the OAuth resource server: which endpoint a request path belongs to, where
 * each resource's metadata lives (RFC 9728 §3.1), the metadata document, the challenges
 * (RFC 6750 §3), the issuer metadata URLs tried (RFC 8414 §3.1, OIDC Discovery) and how a
 * metadata document is judged.
 */
import { describe, expect, it } from 'vitest';
import {
  endpointForMetadataPath,
  endpointPathFor,
  metadataPath,
  protectedResourceMetadata,
  resourceUri,
  type ResourceLayout,
} from '../../../../src/inbound/auth/oauth/protected-resource.js';
import { oauthChallenge } from '../../../../src/inbound/auth/oauth/challenge.js';
import { metadataUrls, readIssuerMetadata } from '../../../../src/inbound/auth/oauth/issuer-metadata.js';
import { tokenScopes } from '../../../../src/inbound/auth/token-scopes.js';

const layout = (base: string): ResourceLayout => ({ base, has: (kind, name) => kind === 'servers' && (name === 'docs' || name === 'a b') });

describe('the endpoint a request path belongs to', () => {
  it('gives a side channel, and every route below it, the side channel itself', () => {
    expect(endpointPathFor(layout('/mcp'), '/mcp/servers/docs')).toBe('/mcp/servers/docs');
    expect(endpointPathFor(layout('/mcp'), '/mcp/servers/docs/sse')).toBe('/mcp/servers/docs');
    expect(endpointPathFor(layout('/mcp'), '/mcp/servers/a%20b')).toBe('/mcp/servers/a%20b');
  });

  it('gives everything else — unknown names, routes outside the MCP path — the aggregate', () => {
    expect(endpointPathFor(layout('/mcp'), '/mcp')).toBe('/mcp');
    expect(endpointPathFor(layout('/mcp'), '/mcp/servers/unknown')).toBe('/mcp');
    expect(endpointPathFor(layout('/mcp'), '/mcp/agents/docs')).toBe('/mcp');
    expect(endpointPathFor(layout('/mcp'), '/readyz')).toBe('/mcp');
    expect(endpointPathFor(layout('/mcp'), '/mcpx/servers/docs')).toBe('/mcp');
    expect(endpointPathFor(layout('/mcp'), '/mcp/servers/%E0%A4%A')).toBe('/mcp');
    expect(endpointPathFor(layout(''), '/servers/docs')).toBe('/servers/docs');
    expect(endpointPathFor(layout(''), '/metrics')).toBe('/');
  });

  it('serves metadata only for an endpoint itself, never for a route below one', () => {
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resource')).toBe('/mcp');
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resource/mcp')).toBe('/mcp');
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resource/mcp/servers/docs')).toBe('/mcp/servers/docs');
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resource/mcp/sse')).toBeUndefined();
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resource/other')).toBeUndefined();
    expect(endpointForMetadataPath(layout('/mcp'), '/.well-known/oauth-protected-resourcex')).toBeUndefined();
    expect(endpointForMetadataPath(layout(''), '/.well-known/oauth-protected-resource')).toBe('/');
  });

  it('builds resource URIs and metadata paths without a trailing slash', () => {
    expect(resourceUri('https://gw.example.com', '/mcp')).toBe('https://gw.example.com/mcp');
    expect(resourceUri('https://gw.example.com', '/')).toBe('https://gw.example.com');
    expect(metadataPath('/mcp/servers/docs')).toBe('/.well-known/oauth-protected-resource/mcp/servers/docs');
    expect(metadataPath('/')).toBe('/.well-known/oauth-protected-resource');
  });
});

describe('metadata and challenges', () => {
  it('writes the RFC 9728 document, leaving out what is not configured', () => {
    expect(protectedResourceMetadata('https://gw/mcp', { authorizationServers: ['https://idp'], scopes: [] })).toEqual({
      resource: 'https://gw/mcp',
      authorization_servers: ['https://idp'],
      bearer_methods_supported: ['header'],
    });
  });

  it('names the metadata URL and scopes in every challenge, the error only when there is one', () => {
    expect(oauthChallenge('https://gw/.well-known/oauth-protected-resource/mcp', ['a', 'b'])).toBe(
      'Bearer resource_metadata="https://gw/.well-known/oauth-protected-resource/mcp", scope="a b"',
    );
    expect(oauthChallenge('https://m', [], 'invalid_token')).toBe('Bearer error="invalid_token", resource_metadata="https://m"');
  });

  it('reads scopes from `scope` or `scp`', () => {
    expect(tokenScopes({ scope: 'a  b' })).toEqual(['a', 'b']);
    expect(tokenScopes({ scp: ['a', 3, 'b'] })).toEqual(['a', 'b']);
    expect(tokenScopes({ scp: 'a b' })).toEqual(['a', 'b']);
    expect(tokenScopes({})).toEqual([]);
  });
});

describe('issuer metadata', () => {
  it('tries RFC 8414 then OpenID Connect Discovery, path inserted then appended', () => {
    expect(metadataUrls('https://idp.example.com')).toEqual([
      'https://idp.example.com/.well-known/oauth-authorization-server',
      'https://idp.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://idp.example.com/tenant/1/')).toEqual([
      'https://idp.example.com/.well-known/oauth-authorization-server/tenant/1',
      'https://idp.example.com/.well-known/openid-configuration/tenant/1',
      'https://idp.example.com/tenant/1/.well-known/openid-configuration',
    ]);
  });

  it('refuses a document that names another issuer, or a key set URL the rules refuse', () => {
    const issuer = 'https://idp.example.com';
    expect(readIssuerMetadata(issuer, { issuer, jwks_uri: 'https://idp.example.com/jwks' }, false)).toEqual({ issuer, jwksUri: 'https://idp.example.com/jwks' });
    expect(readIssuerMetadata(issuer, { issuer: 'https://evil.example.com', jwks_uri: 'https://idp.example.com/jwks' }, false)).toBe('metadata names another issuer');
    expect(readIssuerMetadata(issuer, { issuer }, false)).toBe('metadata has no jwks_uri');
    expect(readIssuerMetadata(issuer, { issuer, jwks_uri: 'http://idp.example.com/jwks' }, false)).toMatch(/^metadata's jwks_uri uses http: to a/);
    expect(readIssuerMetadata(issuer, [], false)).toBe('metadata is not a JSON object');
  });
});
