/**
 * Servers a 2025-era client brings in `initialize` (`_meta["portcullis/servers"]`), against a real
 * gateway on 127.0.0.1: refused by the default policy; judged entry by entry when the policy's
 * `sessionServers` allows them (closed union stdio | streamableHttp, stdio only when allowed, a
 * per-session maximum, never a private network, every server rule of the policy); and, since the
 * gateway does not run them yet, an accepted set answered with a clear "not implemented" that
 * starts nothing — no child process, no connection — and names servers, never URLs or secrets.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../integration/harness/loopback-proxy.js';
import { processesWithMarker, MARKER_VAR } from '../integration/harness/processes.js';
import { MCP_POST_HEADERS, rawRequest, type RawResponse } from '../integration/harness/raw-http.js';
import { newMarker } from '../integration/harness/paths.js';
import { Cleanup } from '../integration/harness/wait.js';
import { startPluginGateway } from './plugin-test-gateway.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

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
      ['plain http beyond loopback', { web: { transport: 'streamableHttp', url: 'http://mcp.example/mcp', headers: { authorization: `Bearer ${SECRET}` } } }, /web\.url/],
    ])('refuses %s with -32602 naming the field, never a value', async (_what, servers, message) => {
      const { gateway } = await startPluginGateway(cleanup, {}, allowing());
      const refused = await initializeWith(gateway.url, servers);
      expectRefused(refused, 400, message);
      expect(refused.json().error?.code).toBe(-32602);
      for (const value of [SECRET, 'mcp.example', 'wss:', 'node']) expect(refused.body).not.toContain(value);
    });

    it('applies the policy\'s server rules: an HTTP host outside upstreamHosts is refused', async () => {
      const { gateway } = await startPluginGateway(cleanup, {}, { ...allowing(), upstreamHosts: ['api.example'] });
      const refused = await initializeWith(gateway.url, { web: { transport: 'streamableHttp', url: 'https://elsewhere.example/mcp' } });
      expectRefused(refused, 400, /web\.url/);
      expect(refused.body).not.toContain('elsewhere.example');
    });

    it('answers an accepted set "not implemented", naming the servers, and starts nothing', async () => {
      const listener = await countingListener();
      const marker = newMarker();
      const { gateway } = await startPluginGateway(cleanup, {}, allowing({ stdio: true }));
      const refused = await initializeWith(gateway.url, {
        web: { transport: 'streamableHttp', url: listener.url.replace('127.0.0.1', 'localhost'), headers: { authorization: `Bearer ${SECRET}` }, mode: 'optional' },
        tool: { transport: 'stdio', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: { [MARKER_VAR]: marker } },
      });
      expectRefused(refused, 501, /the policy accepts the servers this client brings \("web", "tool"\).*nothing was started/);
      for (const value of [SECRET, 'localhost', process.execPath, marker]) expect(refused.body).not.toContain(value);
      expect(listener.connections()).toBe(0);
      expect(processesWithMarker(marker)).toEqual([]);
    });
  });
});
