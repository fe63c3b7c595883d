/**
 * Inbound authentication through a real gateway (DESIGN.md §7, RFC 6750): without a valid bearer
 * token nothing past /healthz answers (401 with a `WWW-Authenticate` challenge and a JSON-RPC
 * error without id); with one, SDK v2 clients of both eras list and call. A 2025 session belongs
 * to the principal that opened it. The client's credential never travels upstream: HTTP request
 * headers are read from a tap in front of the recording proxy, stdio traffic from the recorded
 * stdin. A token variable missing at start refuses the start, naming the variable only. JWTs are
 * verified against a JWKS file minted in the test.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { startHeaderTap, type HeaderTap } from '../security/header-tap.js';
import {
  assertBuilt,
  Cleanup,
  ERAS,
  gatewayConfig,
  httpServer,
  MCP_POST_HEADERS,
  initializeBody,
  processesWithMarker,
  rawRequest,
  startUpstreams,
  textOf,
  within,
  type Era,
  type Upstreams,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;
const AUTH_ENV = { IT_AUTH_ALICE: ALICE, IT_AUTH_BOB: BOB };
const BEARER_AUTH = {
  kind: 'bearer',
  tokens: [
    { principal: 'alice', env: 'IT_AUTH_ALICE' },
    { principal: 'bob', env: 'IT_AUTH_BOB' },
  ],
};
let upstreams: Upstreams;
let tap: HeaderTap;
let gateway: RunningGateway;
let dir: string;

/** Starts a gateway with `auth` over this file's upstreams; closed by `cleanup`. */
async function startAuthGateway(cleanup: Cleanup, auth: Record<string, unknown>, env: Record<string, string> = {}) {
  const servers = { stdio: upstreams.servers().stdio, http: httpServer(tap.url) };
  const started = await startGateway({ config: gatewayConfig(servers, { auth }), logger: silentLogger(), env: { ...process.env, ...env } });
  cleanup.add(() => within(started.close(), 15_000, 'gateway close'));
  return started;
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-auth-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  upstreams = await startUpstreams(perFile);
  tap = await startHeaderTap(upstreams.proxy.url);
  perFile.add(() => tap.close());
  gateway = await startAuthGateway(perFile, BEARER_AUTH, AUTH_ENV);
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** An SDK v2 client of `era` that sends `Authorization: Bearer <token>` on every request. */
async function connectAs(url: string, era: Era, token: string) {
  const client = new Client({ name: `auth-${era}`, version: '1.0.0' }, era === '2026' ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await within(client.connect(transport), 15_000, `${era} client connect`);
  perTest.add(async () => {
    if (transport.sessionId !== undefined) await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'client close').catch(() => undefined);
  });
  return { client, transport };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const initialize = (headers: Record<string, string> = {}) =>
  rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, ...headers }, body: initializeBody() });

/** The checks every 401 shares: the challenge, a JSON-RPC error with id null (JSON-RPC 2.0 §5), no session. */
function expectUnauthorized(response: Awaited<ReturnType<typeof rawRequest>>, error?: string) {
  expect(response.status).toBe(401);
  const challenge = String(response.headers['www-authenticate']);
  expect(challenge).toMatch(/^Bearer realm="[^"]+"/);
  if (error === undefined) expect(challenge).not.toContain('error=');
  else expect(challenge).toContain(`error="${error}"`);
  const body = response.json();
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String), data: { code: 'UNAUTHENTICATED' } } });
  expect(response.headers['mcp-session-id']).toBeUndefined();
}

describe('bearer authentication at the edge', () => {
  it('refuses a request without a token with 401, a Bearer challenge and a JSON-RPC error with id null', async () => {
    expectUnauthorized(await initialize());
  });

  it('refuses a request with a wrong token as invalid_token, without echoing it', async () => {
    const wrong = `wrong-${randomUUID()}`;
    const response = await initialize(bearer(wrong));
    expectUnauthorized(response, 'invalid_token');
    expect(response.body).not.toContain(wrong);
    expect(String(response.headers['www-authenticate'])).not.toContain(wrong);
  });

  it('refuses another scheme as if no token was sent', async () => {
    expectUnauthorized(await initialize({ authorization: `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}` }));
  });

  it('serves /healthz without a token, and /readyz only with one', async () => {
    const health = await rawRequest(gateway.url.replace(/\/mcp$/, '/healthz'), { method: 'GET' });
    expect(health.status).toBe(200);
    const readyUrl = gateway.url.replace(/\/mcp$/, '/readyz');
    expectUnauthorized(await rawRequest(readyUrl, { method: 'GET' }));
    const ready = await rawRequest(readyUrl, { method: 'GET', headers: bearer(ALICE) });
    expect(ready.status).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready' });
  });

  it.each(ERAS)('lets a %s client with a valid token list and call tools on both upstreams', async (era) => {
    const { client } = await connectAs(gateway.url, era, ALICE);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['stdio__echo', 'http__echo']));
    for (const server of ['stdio', 'http']) {
      const text = randomUUID();
      expect(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text } }))).toBe(text);
    }
  });

  // The body is read from the Node request while the copy handed down carries none: a copy that
  // moved the body would start a second reader on the same socket, and a body of many reads would
  // stall between the two.
  it.each(ERAS)('serves a %s call whose authenticated body spans many socket reads', async (era) => {
    const { client } = await connectAs(gateway.url, era, ALICE);
    for (const server of ['stdio', 'http']) {
      const text = `${randomUUID()}${'x'.repeat(400_000)}`;
      expect(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text } }))).toBe(text);
    }
  });

  it('serves the side channel behind the same check', async () => {
    const url = `${gateway.url}/servers/http`;
    expectUnauthorized(await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: initializeBody() }));
    const { client } = await connectAs(url, '2025', BOB);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
  });
});

describe('a 2025 session belongs to the principal that opened it', () => {
  it("answers 404 to another valid principal presenting alice's session id, and alice's session lives on", async () => {
    const { client, transport } = await connectAs(gateway.url, '2025', ALICE);
    const sessionId = transport.sessionId;
    expect(sessionId).toEqual(expect.any(String));
    const asBob = { ...bearer(BOB), 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' };
    const post = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, ...asBob },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(post.status).toBe(404);
    expect(post.body).not.toContain('"tools"');
    expect((await rawRequest(gateway.url, { method: 'GET', headers: { accept: 'text/event-stream', ...asBob } })).status).toBe(404);
    expect((await rawRequest(gateway.url, { method: 'DELETE', headers: asBob })).status).toBe(404);
    const text = randomUUID();
    expect(textOf(await client.callTool({ name: 'http__echo', arguments: { text } }))).toBe(text);
  });

  it('asks for credentials before it looks at a session id', async () => {
    const { transport } = await connectAs(gateway.url, '2025', ALICE);
    const response = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }),
    });
    expectUnauthorized(response);
  });
});

describe("the client's credential stays at the edge", () => {
  it.each(ERAS)("never forwards a %s client's Authorization header to an HTTP or stdio upstream", async (era) => {
    const tapped = tap.requests.length;
    const stdinBefore = readFileSync(upstreams.stdinLog, { encoding: 'utf8', flag: 'a+' }).length;
    const { client } = await connectAs(gateway.url, era, ALICE);
    await client.listTools();
    for (const server of ['stdio', 'http']) await client.callTool({ name: `${server}__echo`, arguments: { text: 'x' } });
    const sent = tap.requests.slice(tapped);
    expect(sent.filter((r) => r.method === 'POST').length).toBeGreaterThan(0);
    for (const request of sent) {
      expect(request.headers.map(([name]) => name)).not.toContain('authorization');
      expect(JSON.stringify(request.headers)).not.toContain(ALICE);
    }
    const stdin = readFileSync(upstreams.stdinLog, 'utf8').slice(stdinBefore);
    expect(stdin).toContain('"tools/call"');
    expect(stdin).not.toContain(ALICE);
    expect(stdin.toLowerCase()).not.toContain('bearer');
  });
});

describe('starting with bearer auth', () => {
  it('refuses to start when a token variable is unset, naming the variable and no value', async () => {
    const marker = upstreams.marker;
    const before = processesWithMarker(marker).length;
    const auth = { kind: 'bearer', tokens: [{ principal: 'alice', env: 'IT_AUTH_ALICE' }, { principal: 'carol', env: 'IT_AUTH_UNSET_CAROL' }] };
    const env: Record<string, string | undefined> = { ...process.env, IT_AUTH_ALICE: ALICE };
    delete env.IT_AUTH_UNSET_CAROL;
    const config = gatewayConfig({ stdio: upstreams.servers().stdio }, { auth });
    const error = await startGateway({ config, logger: silentLogger(), env }).then(
      (started) => (perTest.add(() => started.close()), undefined),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain('IT_AUTH_UNSET_CAROL');
    expect(message).not.toContain(ALICE);
    // Refused before any upstream was started: no new stdio child carries this file's marker.
    expect(processesWithMarker(marker).length).toBeLessThanOrEqual(before);
  });
});

describe('JWT authentication against a JWKS file', () => {
  const issuer = 'https://idp.example.test/';
  const audience = 'portcullis-it';
  let jwtGateway: RunningGateway;
  let sign: (claims: { sub: string; exp: number; iat: number }) => Promise<string>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'it-key', alg: 'ES256', use: 'sig' };
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [jwk] }));
    sign = ({ sub, exp, iat }) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'it-key' })
        .setSubject(sub)
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(privateKey);
    jwtGateway = await startAuthGateway(perFile, { kind: 'jwt', jwks: { file }, issuer, audience });
  });

  const now = () => Math.floor(Date.now() / 1000);

  it.each(ERAS)('lets a %s client with a valid token call a tool', async (era) => {
    const token = await sign({ sub: 'carol', iat: now(), exp: now() + 600 });
    const { client } = await connectAs(jwtGateway.url, era, token);
    const text = randomUUID();
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text } }))).toBe(text);
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    const token = await sign({ sub: 'carol', iat: now() - 7200, exp: now() - 3600 });
    const response = await rawRequest(jwtGateway.url, { headers: { ...MCP_POST_HEADERS, ...bearer(token) }, body: initializeBody() });
    expectUnauthorized(response, 'invalid_token');
    expect(response.body).not.toContain('expired');
  });

  it('refuses a token signed by another key', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'it-key' })
      .setSubject('mallory')
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    const response = await rawRequest(jwtGateway.url, { headers: { ...MCP_POST_HEADERS, ...bearer(forged) }, body: initializeBody() });
    expectUnauthorized(response, 'invalid_token');
  });
});
