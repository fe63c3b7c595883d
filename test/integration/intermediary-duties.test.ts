/**
 * What MCP 2026-07-28 asks of an intermediary, checked through a real gateway in front of the spy
 * upstream (test/fixtures/spy-server.ts) over Streamable HTTP and stdio:
 * - `Mcp-Param-*` headers it does not recognise are forwarded to the upstream (basic/transports/
 *   streamable-http, "Server Behavior for Custom Headers"), and the upstream validates them;
 * - `Mcp-Method` / `Mcp-Name` are checked against the body only on a revision that defines them
 *   (400 with -32020 on 2026-07-28; ignored on a 2025 session, where the headers mean nothing);
 * - `traceparent` in `_meta` reaches the upstream (basic/index, `_meta`; SEP-414);
 * - upstream list changes fan in to every `subscriptions/listen` stream, each notification stamped
 *   with that stream's own `subscriptionId` (basic/patterns/subscriptions);
 * - `server/discover` names the versions the gateway serves, whatever eras its upstreams speak.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { spawnUntilReady } from '../fixtures/spawn-until-ready.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  httpServer,
  MCP_POST_HEADERS,
  messagesOf,
  MODERN_VERSION,
  openRawSession,
  rawRequest,
  ROOT,
  startGatewayFor,
  startHttpFixture,
  startTestGateway,
  textOf,
  waitUntil,
  type Era,
  ERAS,
} from './harness.js';

const SPY_JS = `${ROOT}dist/test/fixtures/spy-server.js`;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const perFile = new Cleanup();
const perTest = new Cleanup();
let gateway: RunningGateway;
/** The HTTP spy's MCP URL (both eras). */
let webUrl: string;

beforeAll(async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-duties-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const web = await spawnUntilReady(process.execPath, [SPY_JS, '--http', '--log', join(dir, 'web.jsonl')], {
    label: 'HTTP spy',
    ready: /^SPY_READY (\S+)$/,
  });
  perFile.add(() => web.stop());
  const fixture = await startHttpFixture();
  perFile.add(() => fixture.stop());
  webUrl = web.match;
  gateway = await startTestGateway(perFile, {
    // The default isolation (principal): one connection per principal and era.
    fx: httpServer(fixture.match),
    web: httpServer(web.match),
    sharedweb: httpServer(web.match, { isolation: 'shared' }),
    spy: { transport: 'stdio', command: process.execPath, args: [SPY_JS, '--stdio', '--log', join(dir, 'spy.jsonl')] },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

interface Seen {
  era: '2025' | '2026';
  traceparent: string | null;
  paramHeaders: Record<string, string>;
  /** The upstream session of a 2025-era HTTP connection; null on 2026. */
  session: string | null;
}

async function whoami(client: Client, server: string, extra: { headers?: Record<string, string>; meta?: Record<string, unknown> } = {}): Promise<Seen> {
  const result = await client.callTool(
    { name: `${server}__whoami`, arguments: {}, ...(extra.meta === undefined ? {} : { _meta: extra.meta }) },
    extra.headers === undefined ? undefined : { headers: extra.headers },
  );
  return JSON.parse(textOf(result)) as Seen;
}

/** A raw 2026-07-28 POST to the gateway: the envelope, and the standard headers unless overridden. */
function modernPost(body: Record<string, unknown>, headers: Record<string, string>) {
  const params = (body.params as Record<string, unknown> | undefined) ?? {};
  const message = {
    jsonrpc: '2.0',
    id: 1,
    ...body,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  return rawRequest(gateway.url, {
    headers: { ...MCP_POST_HEADERS, 'mcp-protocol-version': MODERN_VERSION, ...headers },
    body: JSON.stringify(message),
  });
}

describe('Mcp-Param-* headers', () => {
  it.each(['web', 'sharedweb'])('a header the gateway does not recognise reaches the %s upstream as sent', async (server) => {
    const { client } = await connectClient(perTest, gateway.url, '2026');
    const seen = await whoami(client, server, { headers: { 'Mcp-Param-Tenant': 'acme', 'Mcp-Param-Zone': '=?base64?ZXU=?=' } });
    expect(seen.era).toBe('2026');
    expect(seen.paramHeaders).toEqual({ 'mcp-param-tenant': 'acme', 'mcp-param-zone': '=?base64?ZXU=?=' });
  });

  it('a tool’s x-mcp-header parameter, mirrored by the client, reaches the upstream, which validates it against the body', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2026');
    const listed = (await client.listTools()).tools.find((tool) => tool.name === 'web__regional');
    expect(listed?.inputSchema).toMatchObject({ properties: { region: { 'x-mcp-header': 'Region' } } });
    const result = JSON.parse(textOf(await client.callTool({ name: 'web__regional', arguments: { region: 'eu-west1' } })));
    expect(result).toEqual({ region: 'eu-west1', paramHeaders: { 'mcp-param-region': 'eu-west1' } });
  });

  it('a 2025 session’s Mcp-Param-* headers are not forwarded: that revision defines none', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const seen = await whoami(client, 'web', { headers: { 'Mcp-Param-Tenant': 'acme' } });
    expect(seen.era).toBe('2025');
    expect(seen.paramHeaders).toEqual({});
  });
});

describe('isolation "principal" (the default) with two principals of both eras', () => {
  it('gives each principal’s 2026 client a 2026-era connection carrying its own Mcp-Param-* headers and its 2025 sessions a 2025-era one, never another principal’s', async () => {
    const principals = bearerPrincipals('alice', 'bob');
    const running = await startGatewayFor(perTest, principals, { web: httpServer(webUrl) });
    const connect = async (name: string, era: Era) => (await connectClient(perTest, running.url, era, { headers: principals.headers(name) })).client;
    const [alice26, bob26, alice25, aliceAgain25, bob25] = await Promise.all([
      connect('alice', '2026'),
      connect('bob', '2026'),
      connect('alice', '2025'),
      connect('alice', '2025'),
      connect('bob', '2025'),
    ]);
    const tenant = (name: string) => ({ headers: { 'Mcp-Param-Tenant': name } });
    // Concurrent and interleaved: each call on the connection of its own principal and era.
    const [a26, b26, a25, aa25, b25] = await Promise.all([
      whoami(alice26, 'web', tenant('alice')),
      whoami(bob26, 'web', tenant('bob')),
      whoami(alice25, 'web', tenant('alice')),
      whoami(aliceAgain25, 'web'),
      whoami(bob25, 'web', tenant('bob')),
    ]);
    expect(a26).toMatchObject({ era: '2026', paramHeaders: { 'mcp-param-tenant': 'alice' }, session: null });
    expect(b26).toMatchObject({ era: '2026', paramHeaders: { 'mcp-param-tenant': 'bob' }, session: null });
    for (const seen of [a25, aa25, b25]) expect(seen).toMatchObject({ era: '2025', paramHeaders: {}, session: expect.any(String) });
    // One 2025-era connection per principal: alice's two sessions share hers, bob's is his own.
    expect(aa25.session).toBe(a25.session);
    expect(b25.session).not.toBe(a25.session);
    // Again, the other way round: nothing one principal's call left on a connection reaches the other's.
    const [b26again, a26again] = await Promise.all([whoami(bob26, 'web'), whoami(alice26, 'web', tenant('alice-2'))]);
    expect(b26again.paramHeaders).toEqual({});
    expect(a26again.paramHeaders).toEqual({ 'mcp-param-tenant': 'alice-2' });
    expect((await whoami(bob25, 'web')).session).toBe(b25.session);
  });
});

describe('Mcp-Method and Mcp-Name', () => {
  it('a 2026-07-28 request whose Mcp-Name disagrees with its body is refused with 400 and -32020', async () => {
    const response = await modernPost(
      { method: 'tools/call', params: { name: 'web__whoami', arguments: {} } },
      { 'mcp-method': 'tools/call', 'mcp-name': 'web__other' },
    );
    expect(response.status).toBe(400);
    expect(response.json().error?.code).toBe(-32020);
  });

  it('a 2026-07-28 request whose Mcp-Method disagrees with its body is refused with 400 and -32020', async () => {
    const response = await modernPost({ method: 'tools/list' }, { 'mcp-method': 'tools/call' });
    expect(response.status).toBe(400);
    expect(response.json().error?.code).toBe(-32020);
  });

  it('a 2026-07-28 request whose headers match its body is served', async () => {
    const response = await modernPost(
      { method: 'tools/call', params: { name: 'web__whoami', arguments: {} } },
      { 'mcp-method': 'tools/call', 'mcp-name': 'web__whoami' },
    );
    expect(response.status).toBe(200);
    expect(messagesOf(response).at(-1)).toHaveProperty('result');
  });

  it('a 2025 session’s request is not judged by headers its revision does not define', async () => {
    const session = await openRawSession(gateway.url);
    perTest.add(async () => void (await session.delete()));
    const response = await rawRequest(gateway.url, {
      headers: {
        ...MCP_POST_HEADERS,
        'mcp-session-id': session.id,
        'mcp-protocol-version': '2025-11-25',
        'mcp-method': 'prompts/get',
        'mcp-name': 'something-else',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'web__whoami', arguments: {} } }),
    });
    expect(response.status).toBe(200);
    expect(messagesOf(response).at(-1)).toHaveProperty('result');
  });
});

describe.each(ERAS)('traceparent from a %s client', (era: Era) => {
  it.each(['web', 'sharedweb', 'spy'])('reaches the %s upstream in the request’s _meta', async (server) => {
    const { client } = await connectClient(perTest, gateway.url, era);
    const seen = await whoami(client, server, { meta: { traceparent: TRACEPARENT } });
    expect(seen.traceparent).toBe(TRACEPARENT);
  });
});

describe('server/discover', () => {
  // The gateway terminates the protocol and bridges each upstream's era (input rounds, fulfilled
  // input requests), so it serves 2026-07-28 in front of a 2025-only upstream too: what it lists
  // is what its per-request path serves, not an intersection with the upstreams' versions (one
  // 2025-only upstream would otherwise leave 2026 clients no version at all). 2025-era versions
  // are not per-request versions, so they are not listed; `initialize` still serves them.
  it('names the per-request versions the gateway serves, with upstreams it reaches over 2025-era connections', async () => {
    const response = await modernPost({ method: 'server/discover' }, { 'mcp-method': 'server/discover' });
    expect(response.status).toBe(200);
    const result = messagesOf(response).at(-1)?.result as { supportedVersions?: string[] };
    expect(result.supportedVersions).toEqual([MODERN_VERSION]);
  });

  it('answers a version it does not serve with -32022, listing those it does', async () => {
    const response = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'server/discover' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(response.status).toBe(400);
    const error = response.json().error as { code: number; data?: { supported?: string[] } };
    expect(error.code).toBe(-32022);
    expect(error.data?.supported).toContain(MODERN_VERSION);
  });
});

const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

interface ListenStream {
  readonly messages: Array<{ method?: string; params?: Record<string, unknown> }>;
  close(): void;
}

/** A raw 2026-07-28 `subscriptions/listen` POST whose SSE answer is read as it arrives. */
function openListen(id: string, notifications: Record<string, unknown>): ListenStream {
  const url = new URL(gateway.url);
  const messages: ListenStream['messages'] = [];
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      notifications,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const req = httpRequest({
    host: '127.0.0.1',
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { ...MCP_POST_HEADERS, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' },
  });
  let buffered = '';
  req.on('response', (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('data:') && line.slice(5).trim() !== '') messages.push(JSON.parse(line.slice(5)));
    });
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end(body);
  const stream = { messages, close: () => req.destroy() };
  perTest.add(() => stream.close());
  return stream;
}

function first(stream: ListenStream, method: string) {
  return waitUntil(() => stream.messages.find((m) => m.method === method), `${method} on the listen stream`);
}

describe('subscriptions/listen', () => {
  it('fans an upstream’s tools/list_changed in to every listen stream, each stamped with its own subscriptionId', async () => {
    const a = openListen('listen-a', { toolsListChanged: true });
    const b = openListen('listen-b', { toolsListChanged: true });
    await first(a, 'notifications/subscriptions/acknowledged');
    await first(b, 'notifications/subscriptions/acknowledged');
    const { client } = await connectClient(perTest, gateway.url, '2026');
    perTest.add(async () => void (await client.callTool({ name: 'fx__toggle_tool', arguments: { enabled: false } }).catch(() => undefined)));
    await client.callTool({ name: 'fx__toggle_tool', arguments: { enabled: true } });
    const changedA = await first(a, 'notifications/tools/list_changed');
    const changedB = await first(b, 'notifications/tools/list_changed');
    expect(changedA.params?._meta).toMatchObject({ [SUBSCRIPTION_ID_META_KEY]: 'listen-a' });
    expect(changedB.params?._meta).toMatchObject({ [SUBSCRIPTION_ID_META_KEY]: 'listen-b' });
  });

  it('does not acknowledge resource subscriptions on a 2026-era upstream (it has no resources/subscribe), and says so in the acknowledgement', async () => {
    const stream = openListen('listen-r', { toolsListChanged: true, resourceSubscriptions: ['test://static-text'] });
    const ack = await first(stream, 'notifications/subscriptions/acknowledged');
    expect(ack.params?._meta).toMatchObject({ [SUBSCRIPTION_ID_META_KEY]: 'listen-r' });
    expect(JSON.stringify(ack.params)).toContain('toolsListChanged');
    expect(JSON.stringify(ack.params)).not.toContain('resourceSubscriptions');
  });
});
