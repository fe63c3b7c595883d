/**
 * McpEndpoint on its own, driven with WHATWG Requests (as app.ts hands them over) in front of a
 * real registry of stdio fixture children: what a 2025 session needs to open, that a session
 * belongs to the principal that opened it, the advertised identity, the body bounds, and that
 * DELETE and close end sessions.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpEndpoint } from '../../src/inbound/endpoint.js';
import { SessionAdmission } from '../../src/session/session-admission.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

const URL_ = 'http://127.0.0.1/mcp';
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
let registry: UpstreamRegistry;
let endpoint: McpEndpoint;

beforeAll(async () => {
  assertBuilt();
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: stdioServer(newMarker(), { isolation: 'shared' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
});
afterAll(() => registry.close());

beforeEach(() => {
  endpoint = new McpEndpoint({
    name: 'portcullis-test',
    version: '0.0.0',
    instructions: 'Gateway persona.',
    scope: { registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger },
    sessions: { max: 10, idleTimeoutMs: 60_000 },
    admission: new SessionAdmission({ max: 10, maxPerPrincipal: 10, initializePerMinute: 100, logger }),
    limits: { maxBytes: 4_096, maxDepth: 16 },
    logger,
    streamAfterMs: 1_000,
  });
});
afterEach(() => endpoint.close());

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(URL_, { method: 'POST', headers: { ...POST_HEADERS, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'endpoint-test', version: '1' } },
});

/** Opens a 2025 session as `principal`; resolves with its id and the initialize result. */
async function open(principal?: string): Promise<{ id: string; result: Record<string, unknown> }> {
  const response = await endpoint.fetch(post(initialize()), { principal, access: undefined });
  expect(response.status).toBe(200);
  const id = response.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  const body = (await response.json()) as { result: Record<string, unknown> };
  const sessionHeaders = { 'mcp-session-id': id!, 'mcp-protocol-version': '2025-11-25' };
  expect((await endpoint.fetch(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders), { principal, access: undefined })).status).toBe(202);
  return { id: id!, result: body.result };
}

function inSession(id: string, message: Record<string, unknown>, principal?: string): Promise<Response> {
  return endpoint.fetch(post({ jsonrpc: '2.0', ...message }, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }), { principal, access: undefined });
}

describe('McpEndpoint', () => {
  it('opens a 2025 session on initialize and advertises the gateway’s identity', async () => {
    const { result } = await open();
    expect(endpoint.sessionCount).toBe(1);
    expect(result.serverInfo).toMatchObject({ name: 'portcullis-test', version: '0.0.0' });
    // One upstream: its own instructions; the gateway relays logging and list changes itself.
    expect(result.instructions).toMatch(/Test fixture for Portcullis/);
    expect(result.capabilities).toMatchObject({ logging: {}, tools: { listChanged: true } });
  });

  it('serves the session’s requests through its scope', async () => {
    const { id } = await open();
    const response = await inSession(id, { id: 2, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'through' } } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 2, result: { content: [{ text: 'through' }] } });
  });

  it('answers another principal presenting a session id exactly like an unknown id', async () => {
    const { id } = await open('alice');
    const stolen = await inSession(id, { id: 3, method: 'tools/list' }, 'mallory');
    const unknown = await inSession('00000000-0000-4000-8000-000000000000', { id: 3, method: 'tools/list' }, 'mallory');
    expect(stolen.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await stolen.json()).toEqual(await unknown.json());
    expect((await inSession(id, { id: 4, method: 'tools/list' }, 'alice')).status).toBe(200);
  });

  it.each([
    ['a request other than initialize without a session id', () => post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 400],
    ['a GET without a session id', () => new Request(URL_, { headers: { accept: 'text/event-stream' } }), 400],
    ['a body over the byte limit', () => post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(5_000) } }), 413],
    ['a body nested deeper than the limit', () => post(`${'['.repeat(40)}${']'.repeat(40)}`), 400],
    ['a body that is not JSON', () => post('{not json'), 400],
    ['a body that is not labelled JSON', () => post(initialize(), { 'content-type': 'text/plain' }), 415],
  ])('refuses %s with %i and a JSON-RPC error, opening no session', async (_what, build, status) => {
    const response = await endpoint.fetch(build());
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
    expect(endpoint.sessionCount).toBe(0);
  });

  it('ends a session on DELETE, after which its id is unknown', async () => {
    const { id } = await open();
    const deleted = await endpoint.fetch(new Request(URL_, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } }));
    expect(deleted.status).toBe(200);
    expect(endpoint.sessionCount).toBe(0);
    expect((await inSession(id, { id: 5, method: 'tools/list' })).status).toBe(404);
  });

  it('closes every session when it closes', async () => {
    await open();
    await open();
    expect(endpoint.sessionCount).toBe(2);
    await endpoint.close();
    expect(endpoint.sessionCount).toBe(0);
  });
});
