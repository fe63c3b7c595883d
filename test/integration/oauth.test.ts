/**
 * The gateway as an OAuth 2.1 resource server (MCP authorization, 2025-11-25 and 2026-07-28),
 * against a real authorization server (`oidc-provider` on loopback, test/inbound/auth/oauth/test-idp.ts)
 * and the SDK's own OAuth client: 401 → protected resource metadata (RFC 9728) → authorization
 * server metadata → dynamic client registration → authorization code with PKCE and `resource`
 * (RFC 8707) → token → calls. Then the refusals: a token for another endpoint (audience), one
 * lacking the scope (403 insufficient_scope), one from an issuer not configured, one in the query.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { startTestIdp, followAuthorization, type TestIdp } from '../inbound/auth/oauth/test-idp.js';
import {
  assertBuilt,
  Cleanup,
  ERAS,
  initializeBody,
  MCP_POST_HEADERS,
  rawRequest,
  sideChannelUrl,
  startTestGateway,
  startUpstreams,
  textOf,
  within,
  type Era,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let idp: TestIdp;
let gateway: RunningGateway;
const REDIRECT_URI = 'http://127.0.0.1:1/callback';

beforeAll(async () => {
  assertBuilt();
  idp = await startTestIdp();
  perFile.add(() => idp.close());
  const upstreams = await startUpstreams(perFile);
  gateway = await startTestGateway(perFile, { stdio: upstreams.servers().stdio }, {
    auth: { kind: 'oauth', issuers: [{ issuer: idp.issuer, allowPrivateNetwork: true }], scopes: ['mcp:tools'], resourceName: 'Portcullis test' },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** An in-memory OAuthClientProvider, as an MCP host would keep one per server. */
class MemoryProvider implements OAuthClientProvider {
  client: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  saved: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'portcullis oauth test',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: NonNullable<MemoryProvider['client']>) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<MemoryProvider['saved']>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
}

function clientFor(era: Era): Client {
  return new Client({ name: `oauth-${era}`, version: '1.0.0' }, era === '2026' ? { versionNegotiation: { mode: 'auto' } } : {});
}

/** The whole flow a host runs against `url`: first connect refused, authorize, finish, reconnect. */
async function signIn(url: string, era: Era, provider = new MemoryProvider()): Promise<{ client: Client; provider: MemoryProvider }> {
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(within(clientFor(era).connect(first), 15_000, 'first connect')).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const callback = await within(followAuthorization(provider.authorizationUrl!, REDIRECT_URI), 15_000, 'authorization');
  await within(first.finishAuth(callback), 15_000, 'token exchange');
  const client = clientFor(era);
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await within(client.connect(transport), 15_000, 'authorized connect');
  perTest.add(async () => {
    if (transport.sessionId !== undefined) await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'close').catch(() => undefined);
  });
  return { client, provider };
}

const initialize = (url: string, headers: Record<string, string> = {}) =>
  rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...headers }, body: initializeBody() });

const metadataUrlOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.origin}/.well-known/oauth-protected-resource${parsed.pathname}`;
};

describe('protected resource metadata (RFC 9728)', () => {
  it('answers an unauthenticated request 401 naming the metadata URL and the scope', async () => {
    const response = await initialize(gateway.url);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadataUrlOf(gateway.url)}", scope="mcp:tools"`);
    expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'UNAUTHENTICATED' } } });
  });

  it('serves each endpoint its own resource at the path-suffixed well-known URI, and the aggregate at the root', async () => {
    const origin = new URL(gateway.url).origin;
    const aggregate = await (await fetch(metadataUrlOf(gateway.url))).json();
    expect(aggregate).toEqual({
      resource: gateway.url,
      authorization_servers: [idp.issuer],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
      resource_name: 'Portcullis test',
    });
    expect(await (await fetch(`${origin}/.well-known/oauth-protected-resource`)).json()).toEqual(aggregate);
    const side = sideChannelUrl(gateway.url, 'stdio');
    expect(((await (await fetch(metadataUrlOf(side))).json()) as { resource: string }).resource).toBe(side);
    const challenge = (await initialize(side)).headers['www-authenticate'];
    expect(challenge).toContain(`resource_metadata="${metadataUrlOf(side)}"`);
  });

  it('answers 404 for metadata of a resource it does not serve', async () => {
    expect((await fetch(metadataUrlOf(sideChannelUrl(gateway.url, 'no-such-server')))).status).toBe(404);
    expect((await fetch(`${metadataUrlOf(gateway.url)}/sse`)).status).toBe(404);
  });
});

describe.each(ERAS)('the SDK OAuth client, %s era', (era) => {
  it('runs the whole flow (PRM, AS metadata, registration, PKCE, resource) and then lists and calls', async () => {
    idp.signInAs(`alice-${randomUUID()}`);
    const { client, provider } = await signIn(gateway.url, era);
    expect(provider.saved?.access_token).toBeDefined();
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('stdio__echo');
    const result = await client.callTool({ name: 'stdio__echo', arguments: { text: 'through oauth' } });
    expect(textOf(result)).toContain('through oauth');
  });
});

describe('communication security', () => {
  it('refuses to start an OAuth resource whose public origin is plain http: to a host other machines reach', async () => {
    const starting = startTestGateway(perTest, {}, {
      listen: { host: '127.0.0.1', port: 0, publicUrl: 'http://mcp.example.com' },
      auth: { kind: 'oauth', issuers: [{ issuer: idp.issuer, allowPrivateNetwork: true }], scopes: ['mcp:tools'] },
    });
    await expect(starting).rejects.toMatchObject({ code: 'BIND_REFUSED', message: expect.stringContaining('https: origin') });
  });
});

describe('token refusals', () => {
  it('refuses a token minted for the aggregate on a side channel (audience is the endpoint)', async () => {
    const token = await idp.clientCredentialsToken(gateway.url, 'mcp:tools');
    expect((await initialize(gateway.url, { authorization: `Bearer ${token}` })).status).toBe(200);
    const side = await initialize(sideChannelUrl(gateway.url, 'stdio'), { authorization: `Bearer ${token}` });
    expect(side.status).toBe(401);
    expect(side.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(side.body).not.toContain(token);
  });

  it('answers a token without the required scope 403 insufficient_scope, naming the scope', async () => {
    const token = await idp.clientCredentialsToken(gateway.url, 'mcp:admin');
    const response = await initialize(gateway.url, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      `Bearer error="insufficient_scope", resource_metadata="${metadataUrlOf(gateway.url)}", scope="mcp:tools"`,
    );
    expect(response.json()).toMatchObject({ id: null, error: { data: { code: 'INSUFFICIENT_SCOPE' } } });
  });

  it('refuses a well-formed token from an issuer it does not trust, before fetching anything of it', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ scope: 'mcp:tools' })
      .setProtectedHeader({ alg: 'RS256', kid: 'x' })
      .setIssuer('http://127.0.0.1:9/evil')
      .setSubject('mallory')
      .setAudience(gateway.url)
      .setExpirationTime('5m')
      .sign(privateKey);
    const response = await initialize(gateway.url, { authorization: `Bearer ${forged}` });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('refuses a token signed by another key under the trusted issuer', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ scope: 'mcp:tools' })
      .setProtectedHeader({ alg: 'RS256', kid: 'test-idp-1' })
      .setIssuer(idp.issuer)
      .setSubject('mallory')
      .setAudience(gateway.url)
      .setExpirationTime('5m')
      .sign(privateKey);
    expect((await initialize(gateway.url, { authorization: `Bearer ${forged}` })).status).toBe(401);
  });

  it('binds the resource to the port the request arrived on, not to a port the Host header names', async () => {
    // A token minted for another server on another port of this host (same IdP) must not pass.
    const elsewhere = `http://localhost:9999${new URL(gateway.url).pathname}`;
    const token = await idp.clientCredentialsToken(elsewhere, 'mcp:tools');
    const response = await initialize(gateway.url, { authorization: `Bearer ${token}`, host: 'localhost:9999' });
    expect(response.status).toBe(401);
    const here = `http://localhost:${new URL(gateway.url).port}${new URL(gateway.url).pathname}`;
    const metadata = await rawRequest(metadataUrlOf(gateway.url), { method: 'GET', headers: { host: 'localhost:9999' } });
    expect(metadata.json()).toMatchObject({ resource: here });
  });

  it("answers an expired token, or one without exp, 401 invalid_token even when the IdP's own key signed it for this resource", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: idp.issuer, sub: 'mallory', aud: gateway.url, scope: 'mcp:tools', iat: now - 600 };
    for (const token of [await idp.sign({ ...claims, exp: now - 300 }), await idp.sign(claims)]) {
      const response = await initialize(gateway.url, { authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(response.body).not.toContain(token);
    }
    // The same key and claims with a live exp pass: only the expiry refused the others.
    const live = await idp.sign({ ...claims, exp: now + 300 });
    expect((await initialize(gateway.url, { authorization: `Bearer ${live}` })).status).toBe(200);
  });

  it('answers malformed Bearer credentials 400 invalid_request, still naming the metadata URL', async () => {
    const token = await idp.clientCredentialsToken(gateway.url, 'mcp:tools');
    for (const authorization of [`Bearer ${token} ${token}`, 'Bearer ']) {
      const response = await initialize(gateway.url, { authorization });
      expect(response.status).toBe(400);
      expect(response.headers['www-authenticate']).toContain('error="invalid_request"');
      expect(response.headers['www-authenticate']).toContain(`resource_metadata="${metadataUrlOf(gateway.url)}"`);
      expect(response.json()).toMatchObject({ id: null, error: { data: { code: 'INVALID_REQUEST' } } });
      expect(response.body).not.toContain(token);
    }
  });

  it('refuses a token in the query string even with a valid header', async () => {
    const token = await idp.clientCredentialsToken(gateway.url, 'mcp:tools');
    const response = await initialize(`${gateway.url}?access_token=${token}`, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(400);
    expect(response.body).not.toContain(token);
  });
});
