/**
 * Servers a 2025-era client brings in `initialize` (`_meta["portcullis/servers"]`), against a real
 * gateway on 127.0.0.1: refused by the default policy; judged entry by entry when the policy's
 * `sessionServers` allows them (closed union stdio | streamableHttp, stdio only when allowed, a
 * per-session maximum, never a private network, every server rule of the policy); accepted ones
 * run for that session only (real stdio children), filtered, and are reaped with it; a required
 * one that cannot start refuses the initialize naming the server, never its URL or headers; a
 * gateway server a reload adds later under a name a session's client took stays out of that
 * session (never merged beside its own), while every other session sees it.
 */
import { createServer } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../integration/harness/loopback-proxy.js';
import { processesWithMarker, MARKER_VAR } from '../integration/harness/processes.js';
import { MCP_POST_HEADERS, messagesOf, rawRequest, type RawResponse, type RawSession } from '../integration/harness/raw-http.js';
import { newMarker } from '../integration/harness/paths.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { installTripwire } from '../net/tripwire.js';
import { fixture } from '../plugins/plugin-test-helpers.js';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { startPluginGateway } from './plugin-test-gateway.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

const APPS = realpathSync(fixture('../apps/apps-server.mjs'));
const APPS_CFG = { transport: 'stdio', command: process.execPath, args: [APPS, 'cfg'], isolation: 'shared' };

const SECRET = 'session-secret-header-value-77';

function initialize(servers: unknown, id = 1): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1.0.0' },
      _meta: { 'portcullis/servers': servers },
    },
  });
}

async function initializeWith(url: string, servers: unknown): Promise<RawResponse> {
  return rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: initialize(servers) });
}

/** An HTTP listener on 127.0.0.1 that counts every connection made to it. */
async function countingListener(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((_req, res) => res.writeHead(500).end());
  server.on('connection', () => connections++);
  const listening = await listenOnLoopback(server, '/mcp');
  cleanup.add(() => listening.close());
  return { url: listening.url, connections: () => connections };
}

/** A 2025 session opened over raw HTTP whose initialize brings `servers` (none when undefined). */
async function openSessionWith(url: string, servers: unknown): Promise<RawSession> {
  const body = servers === undefined ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) : initialize(servers);
  const init = await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed with HTTP ${init.status}: ${init.body}`);
  const version = (messagesOf(init)[0]?.result as { protocolVersion?: string } | undefined)?.protocolVersion ?? '2025-11-25';
  const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': version };
  const post = (message: Record<string, unknown>) => rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
  await post({ method: 'notifications/initialized' });
  const session = { id, post, delete: () => rawRequest(url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': version } }) };
  cleanup.add(async () => void (await session.delete().catch(() => undefined)));
  return session;
}

/** The JSON-RPC answer of a POST, whether it came as one JSON body or at the end of an SSE stream. */
function answerOf(response: RawResponse): { result?: any; error?: { code: number; message: string } } {
  const answer = messagesOf(response).find((m) => 'result' in m || 'error' in m);
  if (answer === undefined) throw new Error(`no answer in HTTP ${response.status}`);
  return answer as { result?: any; error?: { code: number; message: string } };
}

function expectRefused(response: RawResponse, status: number, message: RegExp): void {
  expect(response.status).toBe(status);
  expect(response.headers['mcp-session-id']).toBeUndefined();
  const body = response.json();
  expect(body.id).toBe(1);
  expect(body.error?.message).toMatch(message);
}

describe('servers a client brings', () => {
  it('are refused by the default policy, and initialize without them still works', async () => {
    const { gateway } = await startPluginGateway(cleanup, {});
    const refused = await initializeWith(gateway.url, { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp' } });
    expectRefused(refused, 400, /sessionServers\.allow is false/);
    expect(refused.json().error?.code).toBe(-32602);
    const plain = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(plain.status).toBe(200);
    expect(plain.headers['mcp-session-id']).toBeDefined();
  });

  describe('when the policy allows them', () => {
    const allowing = (extra: Record<string, unknown> = {}) => ({ sessionServers: { allow: true, maxPerSession: 2, ...extra } });

    it.each([
      ['an HTTP+SSE entry (not in the union)', { old: { transport: 'sse', url: 'https://mcp.example/sse' } }, /old\.transport: must be "stdio" or "streamableHttp"/],
      ['an unknown transport arm', { ws: { transport: 'websocket', url: 'wss://mcp.example' } }, /ws\.transport: must be "stdio" or "streamableHttp"/],
      ['an entry without a transport', { bare: { url: 'https://mcp.example' } }, /bare\.transport: must be "stdio" or "streamableHttp"/],
      ['an unknown field', { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', shell: true } }, /portcullis\/servers"\]\.web: Unrecognized key.*shell/],
      ['a private network', { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', allowPrivateNetwork: true } }, /web\.allowPrivateNetwork: a server a client brings never reaches a private network/],
      ['a stdio entry without the stdio allowance', { tool: { transport: 'stdio', command: 'node' } }, /tool\.transport: .*sessionServers\.stdio is false/],
      ['more than the per-session maximum', { a: { transport: 'streamableHttp', url: 'https://a.example/mcp' }, b: { transport: 'streamableHttp', url: 'https://b.example/mcp' }, c: { transport: 'streamableHttp', url: 'https://c.example/mcp' } }, /at most 2 servers per session/],
      ['a name that is not a server name', { '../x': { transport: 'streamableHttp', url: 'https://a.example/mcp' } }, /a server name must be/],
      ['a list instead of a record', [{ transport: 'streamableHttp', url: 'https://a.example/mcp' }], /must be an object of server name to server entry/],
      ['a token exchange (per principal, configured servers only)', { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', upstreamAuth: { kind: 'tokenExchange', tokenUrl: 'https://idp.example/token', clientId: 'c', clientSecretEnv: 'OK_SECRET' } } }, /web\.upstreamAuth: a server a client brings gets no credentials of the gateway's/],
      // The URL is the client's: a gateway secret read from the environment would be sent to it.
      ['the gateway\'s own OAuth client', { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', upstreamAuth: { kind: 'clientCredentials', tokenUrl: 'https://idp.example/token', clientId: 'c', clientSecretEnv: 'OK_SECRET' } } }, /web\.upstreamAuth: a server a client brings gets no credentials of the gateway's/],
      ['a header read from the gateway\'s environment', { web: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', envHeaders: { 'X-Key': 'OK_SECRET' } } }, /web\.envHeaders: a server a client brings gets no value from the gateway's environment/],
      ['plain http beyond loopback', { web: { transport: 'streamableHttp', url: 'http://mcp.example/mcp', headers: { authorization: `Bearer ${SECRET}` } } }, /web\.url/],
    ])('refuses %s with -32602 naming the field, never a value', async (_what, servers, message) => {
      const { gateway } = await startPluginGateway(cleanup, {}, allowing());
      const refused = await initializeWith(gateway.url, servers);
      expectRefused(refused, 400, message);
      expect(refused.json().error?.code).toBe(-32602);
      for (const value of [SECRET, 'mcp.example', 'wss:', 'node']) expect(refused.body).not.toContain(value);
    });

    it('refuses them on a server\'s side channel, which serves that server only', async () => {
      const { gateway } = await startPluginGateway(cleanup, { servers: { cfg: APPS_CFG } }, allowing({ stdio: true }));
      const refused = await initializeWith(`${gateway.url}/servers/cfg`, { tool: { transport: 'stdio', command: process.execPath, args: [APPS, 'tool'] } });
      expectRefused(refused, 400, /side channel serves that server only/);
    });

    it('applies the policy\'s server rules: an HTTP host outside upstreamHosts is refused', async () => {
      const { gateway } = await startPluginGateway(cleanup, {}, { ...allowing(), upstreamHosts: ['api.example'] });
      const refused = await initializeWith(gateway.url, { web: { transport: 'streamableHttp', url: 'https://elsewhere.example/mcp' } });
      expectRefused(refused, 400, /web\.url/);
      expect(refused.body).not.toContain('elsewhere.example');
    });

    it('refuses initialize when a required one cannot start, naming it, never its URL; nothing stays open', async () => {
      // A loopback listener: a server a client brings never reaches a private network, so the
      // egress guard refuses it before any connection (the listener sees none, the tripwire no dial).
      const listener = await countingListener();
      const marker = newMarker();
      const { gateway } = await startPluginGateway(cleanup, { servers: { cfg: APPS_CFG } }, allowing({ stdio: true }));
      const wire = installTripwire();
      let refused: RawResponse;
      try {
        refused = await initializeWith(gateway.url, {
          web: { transport: 'streamableHttp', url: listener.url, headers: { authorization: `Bearer ${SECRET}` } },
          tool: { transport: 'stdio', command: process.execPath, args: [APPS, 'tool'], env: { [MARKER_VAR]: marker } },
        });
      } finally {
        wire.restore();
      }
      expect(wire.violations).toEqual([]);
      expectRefused(refused, 502, /the required server "session\.web" this client brought could not be started \(UPSTREAM_BLOCKED\)/);
      for (const value of [SECRET, '127.0.0.1', String(new URL(listener.url).port)]) expect(refused.body).not.toContain(value);
      expect(listener.connections()).toBe(0);
      // The stdio one that did start is reaped with the refused session.
      await waitUntil(() => processesWithMarker(marker).length === 0, 'brought child reaped');
    });

    it("spends the session's request rate on calls of the servers it brought, as on any other", async () => {
      const marker = newMarker();
      const { gateway } = await startPluginGateway(cleanup, { servers: { cfg: APPS_CFG } }, {
        ...allowing({ stdio: true }),
        rateLimits: { toolCalls: { perMinute: 1, burst: 1 } },
      });
      const mine = await openSessionWith(gateway.url, {
        mine: { transport: 'stdio', command: process.execPath, args: [APPS, 'mine'], env: { [MARKER_VAR]: marker } },
      });
      const call = (id: number) => mine.post({ id, method: 'tools/call', params: { name: 'session.mine__show', arguments: {} } });
      expect((answerOf(await call(2)).result as { content: Array<{ text: string }> }).content[0]!.text).toBe('mine show');
      const refused = answerOf(await call(3));
      expect(refused.error?.code).toBe(-32600);
      expect(refused.error?.message).toMatch(/rate/i);
    });

    it('runs the ones it accepts for that session only, filtered, and reaps them with the session', async () => {
      const marker = newMarker();
      const { gateway } = await startPluginGateway(cleanup, { servers: { cfg: APPS_CFG } }, { ...allowing({ stdio: true }), deniedTools: ['session.mine__widget'] });
      const mine = await openSessionWith(gateway.url, {
        mine: { transport: 'stdio', command: process.execPath, args: [APPS, 'mine'], env: { [MARKER_VAR]: marker }, disabledTools: ['plain'] },
        broken: { transport: 'streamableHttp', url: 'https://127.0.0.1:1/mcp', mode: 'optional' },
      });
      const other = await openSessionWith(gateway.url, undefined);
      const toolsOf = async (session: typeof mine) => (answerOf(await session.post({ id: 5, method: 'tools/list' })).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();

      // Its own server's tools, minus its disabledTools and the policy's denied tools; the optional one that cannot start adds none.
      expect(await toolsOf(mine)).toEqual(['cfg__plain', 'cfg__show', 'cfg__widget', 'session.mine__show']);
      const called = answerOf(await mine.post({ id: 6, method: 'tools/call', params: { name: 'session.mine__show', arguments: {} } })).result as { content: Array<{ text: string }> };
      expect(called.content[0]!.text).toBe('mine show');
      expect(processesWithMarker(marker)).toHaveLength(1);

      // The gateway's own resources are the session's as every session's: the servers it brought take none away.
      const ownResourcesOf = async (session: typeof mine) =>
        (answerOf(await session.post({ id: 9, method: 'resources/list' })).result as { resources: Array<{ uri: string }> }).resources
          .map((r) => r.uri)
          .filter((uri) => uri.startsWith('portcullis://'))
          .sort();
      const gatewayOwn = await ownResourcesOf(other);
      expect(gatewayOwn.length).toBeGreaterThan(0);
      expect(await ownResourcesOf(mine)).toEqual(gatewayOwn);

      // Another session sees none of it and cannot call it.
      expect(await toolsOf(other)).toEqual(['cfg__plain', 'cfg__show', 'cfg__widget']);
      const foreign = answerOf(await other.post({ id: 7, method: 'tools/call', params: { name: 'session.mine__show', arguments: {} } }));
      expect(foreign.error?.code).toBe(-32602);
      const denied = answerOf(await mine.post({ id: 8, method: 'tools/call', params: { name: 'session.mine__widget', arguments: {} } }));
      expect(denied.error?.code).toBe(-32602);

      // Its client plugin is in its own session's list only.
      const listFor = async (sessionId?: string) =>
        ((await (await fetch(`${gateway.url}/customizations`, { headers: sessionId === undefined ? {} : { 'mcp-session-id': sessionId } })).json()) as { items: Array<Record<string, any>> }).items;
      const own = (await listFor(mine.id)).filter((i) => i.type === 'plugin');
      expect(own).toHaveLength(1);
      const plugin = own[0]!;
      expect(plugin).toMatchObject({ type: 'plugin', name: 'session', uri: 'portcullis:session', load: { kind: 'loaded' } });
      expect(plugin.clientId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(plugin.children.map((c: Record<string, any>) => [c.name, c.state.kind])).toEqual([
        ['session.broken', 'error'],
        ['session.mine', 'ready'],
      ]);
      expect(plugin.children[0].state.error.message).toContain('"session.broken"');
      const published = JSON.stringify(plugin);
      for (const secret of [mine.id, '127.0.0.1', process.execPath, marker]) expect(published).not.toContain(secret);
      expect((await listFor()).some((i) => i.type === 'plugin')).toBe(false);
      expect((await listFor(other.id)).some((i) => i.type === 'plugin')).toBe(false);

      await mine.delete();
      await waitUntil(() => processesWithMarker(marker).length === 0, 'session child reaped');
      // The session is gone: its id names nothing any more (404), and no list shows its plugin.
      expect((await fetch(`${gateway.url}/customizations`, { headers: { 'mcp-session-id': mine.id } })).status).toBe(404);
      expect((await listFor()).some((i) => i.type === 'plugin' && i.clientId !== undefined)).toBe(false);
      expect(await toolsOf(other)).toEqual(['cfg__plain', 'cfg__show', 'cfg__widget']);
    });

    it('keeps a name its client took its own when a reload adds a gateway server under it, which every other session sees', async () => {
      const { gateway, configDir } = await startPluginGateway(cleanup, { servers: { cfg: APPS_CFG } }, allowing({ stdio: true }));
      const mine = await openSessionWith(gateway.url, { mine: { transport: 'stdio', command: process.execPath, args: [APPS, 'mine'] } });
      const other = await openSessionWith(gateway.url, undefined);
      const file = path.join(configDir, 'gateway.json');
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { servers: Record<string, unknown> };
      raw.servers['session.mine'] = { ...APPS_CFG, args: [APPS, 'gateway'] };
      writeFileSync(file, JSON.stringify(raw));
      expect(await gateway.reload('admin')).toMatchObject({ applied: true, added: ['session.mine'], failed: [] });

      const toolsOf = async (session: typeof mine) => (answerOf(await session.post({ id: 5, method: 'tools/list' })).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name).sort();
      const show = async (session: typeof mine) =>
        (answerOf(await session.post({ id: 6, method: 'tools/call', params: { name: 'session.mine__show', arguments: {} } })).result as { content: Array<{ text: string }> }).content[0]!.text;
      expect((await toolsOf(mine)).filter((name) => name === 'session.mine__show')).toHaveLength(1);
      expect(await show(mine)).toBe('mine show');
      expect(await toolsOf(other)).toContain('session.mine__show');
      expect(await show(other)).toBe('gateway show');
    });
  });
});
