/**
 * Per-principal upstream tokens (`upstreamAuth.kind: "tokenExchange"`, RFC 8693) against a real
 * authorization server (`oidc-provider` on loopback, with a token-exchange grant registered the
 * way an IdP that supports RFC 8693 answers it) and an HTTP MCP upstream on loopback that accepts
 * only that server's tokens for its own URL and says whose token it got. Two principals call
 * through the gateway with real SDK clients of both eras: each reaches the upstream as itself and
 * never as the other; an exchanged token is reused, renewed when it expires, replaced when the
 * upstream refuses it; a refused exchange is a clear error naming the server; no token text
 * reaches the logs.
 */
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { serve } from '@hono/node-server';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { errors as oidcErrors } from 'oidc-provider';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from '../../src/upstream/credentials/token-exchange.js';
import { startTestIdp, type TestIdp } from '../inbound/auth/oauth/test-idp.js';
import { assertBuilt, Cleanup, connectClient, ERAS, errorOf, gatewayConfig, textOf, waitUntil, within } from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
/** The gateway's own resource at the IdP: inbound tokens are minted for it. */
const GATEWAY_AUDIENCE = 'https://gateway.test/mcp';
/** Also accepted by the gateway; its tokens live one second (the gateway tolerates 30 s of skew). */
const SHORT_AUDIENCE = 'https://gateway.test/short';
const GATEWAY_CLIENT = 'portcullis-gateway';
const GATEWAY_SECRET = 'gateway-exchange-secret-for-tests-only';
const USERS = ['alice', 'bob'] as const;
/** A principal that only ever presents a token past its `exp`. */
const LATE = 'carol';
/** A principal whose first connection meets a refused exchange. */
const REFUSED = 'dave';
const userSecret = (user: string) => `${user}-machine-secret-for-tests-only`;

let idp: TestIdp;
let upstreamUrl = '';
let upstream: HttpServer;
let gateway: RunningGateway;
/** Every log line the gateway wrote. */
const logLines: string[] = [];
/** Exchanges the IdP performed: whose subject, which resource. */
const exchanges: Array<{ sub: string; resource: string | undefined }> = [];
/** Every bearer the upstream received, and which of them it accepted, with whose `sub`. */
const received: string[] = [];
const acceptedSubs: Array<{ token: string; sub: string }> = [];
/** Tokens the upstream refuses from now on; the IdP refuses every exchange while set. */
const revoked = new Set<string>();
let refuseExchanges = false;
/** Requests of these subjects wait at the upstream until `gate` settles; `gated` counts arrivals. */
const gatedSubs = new Set<string>();
let gate: Promise<void> = Promise.resolve();
let gated = 0;
/** Principals whose two clients hold tokens of different scopes, one per era. */
const multiOf = (era: string) => `multi-${era}`;
/** Lifetime of the next exchanged tokens, seconds. */
let exchangedTtl = 300;

async function inboundToken(user: string, resource = GATEWAY_AUDIENCE, scope = 'mcp:tools'): Promise<string> {
  const response = await fetch(`${idp.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${user}:${userSecret(user)}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`no inbound token for ${user}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The token-exchange grant as an RFC 8693 IdP answers it: the subject's `sub` and `scope`, audience the resource. */
function registerTokenExchange(idp: TestIdp): void {
  const { provider } = idp;
  const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    async (ctx) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      if (refuseExchanges) throw new oidcErrors.InvalidGrant('exchange refused by policy');
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE || params.subject_token === undefined) throw new oidcErrors.InvalidRequest('unsupported subject_token_type');
      let sub: string;
      let scope: unknown;
      try {
        ({ payload: { sub: sub = '', scope } } = await jwtVerify(params.subject_token, keys, { issuer: idp.issuer, audience: [GATEWAY_AUDIENCE, SHORT_AUDIENCE] }));
      } catch {
        throw new oidcErrors.InvalidGrant('subject_token refused');
      }
      const resource = params.resource;
      exchanges.push({ sub, resource });
      const client = ctx.oidc.client!;
      const token = new provider.AccessToken({ accountId: sub, client, grantId: `exchange-${exchanges.length}`, gty: 'token-exchange', scope: typeof scope === 'string' ? scope : 'mcp:tools' });
      token.resourceServer = new provider.ResourceServer(resource ?? '', { scope: 'mcp:tools mcp:admin', audience: resource, accessTokenTTL: exchangedTtl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } });
      const value = await token.save();
      ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration };
    },
    ['subject_token', 'subject_token_type', 'resource', 'audience', 'scope', 'requested_token_type', 'actor_token', 'actor_token_type'],
  );
}

/** An MCP upstream that accepts only the IdP's tokens for its own URL and answers `whoami` with the token's `sub`, `myscope` with its `scope`. */
async function startUpstream(): Promise<void> {
  const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
  const handler = createMcpHandler(
    (ctx) => {
      const sub = String(ctx.authInfo?.extra?.sub ?? '');
      const scope = String(ctx.authInfo?.extra?.scope ?? '');
      const server = new Server({ name: 'per-user', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', () => ({ tools: ['whoami', 'myscope'].map((name) => ({ name, inputSchema: { type: 'object' as const } })) }));
      server.setRequestHandler('tools/call', (request) => ({ content: [{ type: 'text' as const, text: request.params.name === 'myscope' ? scope : sub }] }));
      return server;
    },
    { onerror: () => undefined },
  );
  upstream = await new Promise<HttpServer>((resolve) => {
    const listening = serve(
      {
        hostname: '127.0.0.1',
        port: 0,
        fetch: async (request) => {
          const authorization = request.headers.get('authorization') ?? '';
          const token = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
          received.push(token);
          const refuse = () => new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' } });
          if (token === '' || revoked.has(token)) return refuse();
          let sub: string;
          let scope: unknown;
          try {
            ({ payload: { sub: sub = '', scope } } = await jwtVerify(token, keys, { issuer: idp.issuer, audience: upstreamUrl }));
          } catch {
            return refuse();
          }
          acceptedSubs.push({ token, sub });
          if (gatedSubs.has(sub)) {
            gated++;
            await gate;
          }
          return handler.fetch(request, { authInfo: { token, clientId: 'gateway', scopes: [], extra: { sub, scope } } });
        },
      },
      () => resolve(listening as HttpServer),
    ) as HttpServer;
  });
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  perFile.add(
    () =>
      new Promise<void>((resolve) => {
        upstream.closeAllConnections();
        upstream.close(() => resolve());
      }),
  );
}

const tokens = new Map<string, string>();
const headersOf = (user: string) => ({ Authorization: `Bearer ${tokens.get(user)!}` });
const exchangesOf = (sub: string) => exchanges.filter((e) => e.sub === sub).length;

beforeAll(async () => {
  assertBuilt();
  idp = await startTestIdp({
    accessTokenTtl: (resource) => (resource === SHORT_AUDIENCE ? 1 : 300),
    clients: [
      ...[...USERS, LATE, REFUSED, ...ERAS.map(multiOf)].map((user) => ({ client_id: user, client_secret: userSecret(user), grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
      { client_id: GATEWAY_CLIENT, client_secret: GATEWAY_SECRET, grant_types: [TOKEN_EXCHANGE_GRANT], redirect_uris: [], response_types: [] },
    ],
  });
  perFile.add(() => idp.close());
  registerTokenExchange(idp);
  await startUpstream();
  for (const user of USERS) tokens.set(user, await inboundToken(user));
  gateway = await startGateway({
    config: gatewayConfig(
      {
        peruser: {
          transport: 'streamableHttp',
          url: upstreamUrl,
          allowPrivateNetwork: true,
          isolation: 'principal',
          upstreamAuth: { kind: 'tokenExchange', tokenUrl: `${idp.issuer}/token`, clientId: GATEWAY_CLIENT, clientSecretEnv: 'IT_EXCHANGE_SECRET', scope: 'mcp:tools', allowPrivateNetwork: true },
        },
      },
      { auth: { kind: 'jwt', jwks: { url: `${idp.issuer}/jwks`, allowPrivateNetwork: true }, issuer: idp.issuer, audience: [GATEWAY_AUDIENCE, SHORT_AUDIENCE] } },
    ),
    // The gateway's own logger (its redaction included), at debug: every line it would write.
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } }),
    env: { ...process.env, IT_EXCHANGE_SECRET: GATEWAY_SECRET },
  });
  perFile.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterEach(async () => {
  await perTest.run();
  refuseExchanges = false;
  exchangedTtl = 300;
});
afterAll(() => perFile.run());

describe.each(ERAS)('tokenExchange, %s era', (era) => {
  it("reaches the upstream as each principal, never as the other, and never with the client's own token", async () => {
    const clients = await Promise.all(USERS.map(async (user) => ({ user, ...(await connectClient(perTest, gateway.url, era, { headers: headersOf(user) })) })));
    const listed = await clients[0]!.client.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('peruser__whoami');
    // Interleaved, concurrently: each answer names its own caller.
    const answers = await Promise.all(
      [...clients, ...clients, ...clients].map(async ({ user, client }) => ({ user, sub: textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} })) })),
    );
    for (const { user, sub } of answers) expect(sub).toBe(user);
    expect(new Set(answers.map((a) => a.sub))).toEqual(new Set(USERS));
    // The callers' own tokens never reached the upstream.
    for (const inbound of tokens.values()) expect(received).not.toContain(inbound);
    expect(exchanges.every((e) => e.resource === upstreamUrl)).toBe(true);
  });

  it("exchanges each request's own token: a principal's broad and narrow tokens each reach the upstream as themselves", async () => {
    // One user, two clients: a desktop app with the broad token, an agent with the narrow one.
    const user = multiOf(era);
    const broad = await inboundToken(user, GATEWAY_AUDIENCE, 'mcp:tools mcp:admin');
    const narrow = await inboundToken(user, GATEWAY_AUDIENCE, 'mcp:tools');
    tokens.set(`${user}-broad`, broad);
    tokens.set(`${user}-narrow`, narrow);
    const desktop = await connectClient(perTest, gateway.url, era, { headers: { Authorization: `Bearer ${broad}` } });
    // The desktop's call opens the principal's connection, held at the upstream meanwhile…
    let release!: () => void;
    gate = new Promise((resolve) => (release = resolve));
    gatedSubs.add(user);
    const arrived = gated;
    const first = desktop.client.callTool({ name: 'peruser__myscope', arguments: {} });
    await waitUntil(() => gated > arrived, 'the desktop call reached the upstream');
    // …while the agent authenticates: its token is now the principal's latest.
    const agent = await connectClient(perTest, gateway.url, era, { headers: { Authorization: `Bearer ${narrow}` } });
    const agentCall = agent.client.callTool({ name: 'peruser__myscope', arguments: {} });
    gatedSubs.delete(user);
    release();
    expect(textOf(await first)).toBe('mcp:tools mcp:admin');
    expect(textOf(await agentCall)).toBe('mcp:tools');
    // Used alternately, concurrently: each request is exchanged for its own token.
    const callers = [
      { client: desktop.client, scope: 'mcp:tools mcp:admin' },
      { client: agent.client, scope: 'mcp:tools' },
    ];
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => callers)
        .flat()
        .map(async ({ client, scope }) => ({ scope, got: textOf(await client.callTool({ name: 'peruser__myscope', arguments: {} })) })),
    );
    for (const { scope, got } of answers) expect(got).toBe(scope);
    expect(textOf(await agent.client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe(user);
  });
});

describe('a server reached per principal', () => {
  it('opens no connection of the gateway\'s own: ready without it, and no request ever left without a principal\'s token', async () => {
    const ready = await fetch(gateway.url.replace(/\/mcp$/, '/readyz'), { headers: headersOf('alice') });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { servers: Array<{ server: string; state: string }> }).servers).toEqual([{ server: 'peruser', mode: 'required', state: 'ready' }]);
    expect(received).not.toContain('');
    // The customisation list shows it usable (each caller's connection opens on use), not "starting" for ever.
    const list = await fetch(`${gateway.url}/customizations`, { headers: headersOf('alice') });
    const items = ((await list.json()) as { items: Array<{ name: string; state?: { kind: string } }> }).items;
    expect(items.find((i) => i.name === 'peruser')?.state).toEqual({ kind: 'ready' });
  });
});

describe('the exchanged token', () => {
  it('is exchanged once per principal and reused for later calls', async () => {
    const before = exchangesOf('alice');
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: headersOf('alice') });
    await client.callTool({ name: 'peruser__whoami', arguments: {} });
    // This inbound token was exchanged by the calls of both eras above already: no new exchange.
    expect(exchangesOf('alice')).toBe(before);
    for (let i = 0; i < 5; i++) expect(textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe('alice');
    expect(exchangesOf('alice')).toBe(before);
  });

  it('is exchanged again once it has expired', async () => {
    // A fresh principal token: its exchange is new, and short-lived.
    tokens.set('bob', await inboundToken('bob'));
    exchangedTtl = 2;
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: headersOf('bob') });
    expect(textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe('bob');
    const first = acceptedSubs.at(-1)!.token;
    const before = exchangesOf('bob');
    const expiry = decodeJwt(first).exp! * 1000;
    await waitUntil(() => Date.now() > expiry, 'the exchanged token expired', 5_000);
    expect(textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe('bob');
    expect(exchangesOf('bob')).toBeGreaterThan(before);
    expect(acceptedSubs.at(-1)!.token).not.toBe(first);
  });

  it('is dropped when the upstream refuses it, and the next call gets a new exchange', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: headersOf('alice') });
    expect(textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe('alice');
    const old = acceptedSubs.filter((a) => a.sub === 'alice').at(-1)!.token;
    const before = exchangesOf('alice');
    revoked.add(old);
    await client.callTool({ name: 'peruser__whoami', arguments: {} }).catch(() => undefined);
    expect(textOf(await client.callTool({ name: 'peruser__whoami', arguments: {} }))).toBe('alice');
    expect(exchangesOf('alice')).toBe(before + 1);
    expect(acceptedSubs.at(-1)!.token).not.toBe(old);
  });
});

describe('an exchange the IdP refuses', () => {
  it('fails the call with an error naming the server and the OAuth error code, no token in it', async () => {
    // A principal with no exchanged token yet, so the call needs an exchange.
    const fresh = await inboundToken('bob');
    tokens.set('bob-refused', fresh);
    refuseExchanges = true;
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: { Authorization: `Bearer ${fresh}` } });
    // bob's cached exchange is of his older token: the new one must be exchanged, and is refused.
    const error = await errorOf(client.callTool({ name: 'peruser__whoami', arguments: {} }));
    expect(error.message).toContain('upstream "peruser"');
    expect(error.message).toContain('invalid_grant');
    expect(error.message).not.toContain(fresh);
  });

  it('fails the first connection of a principal with the same error, not a negotiation failure', async () => {
    const token = await inboundToken(REFUSED);
    tokens.set(REFUSED, token);
    refuseExchanges = true;
    const { client } = await connectClient(perTest, gateway.url, '2025', { headers: headersOf(REFUSED) });
    const error = await errorOf(client.callTool({ name: 'peruser__whoami', arguments: {} }));
    expect(error.message).toContain('upstream "peruser"');
    expect(error.message).toContain('the token endpoint answered HTTP 400 (invalid_grant)');
    expect(error.message).not.toContain(token);
  });
});

describe('a caller with no live token to exchange', () => {
  it('is answered a clear error asking it to authenticate again, without a hang or a request to the IdP', async () => {
    const late = await inboundToken(LATE, SHORT_AUDIENCE);
    tokens.set(LATE, late);
    const expiry = decodeJwt(late).exp! * 1000;
    await waitUntil(() => Date.now() > expiry, 'the inbound token expired', 5_000);
    // Still inside the gateway's clock tolerance: authenticated, but never kept for an exchange.
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: headersOf(LATE) });
    const error = await within(errorOf(client.callTool({ name: 'peruser__whoami', arguments: {} })), 10_000, 'the refusal');
    expect(error.message).toContain('upstream "peruser"');
    expect(error.message).toContain('authenticate again');
    expect(exchangesOf(LATE)).toBe(0);
  });
});

describe('the logs', () => {
  // Last: after every exchange, refusal and 401 above.
  it('never hold a token (inbound or exchanged) or the client secret, at debug level', () => {
    const logs = logLines.join('');
    expect(logs).toContain('"server":"peruser"');
    const secrets = [...tokens.values(), ...received.filter((t) => t !== ''), GATEWAY_SECRET];
    expect(secrets.length).toBeGreaterThan(4);
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
