/**
 * The gateway's own 2026-07-28 binding (src/inbound/request-2026.ts) through a real McpEndpoint
 * in front of a real registry of a recording stdio fixture child:
 * - the validation ladder answers every malformed request with the HTTP status and the JSON-RPC
 *   error (code, message, data, id) the SDK's own `createMcpHandler` gives for the same bytes —
 *   the SDK's handler runs beside it in this file as the reference;
 * - a call whose result is all it sends is one JSON body; one that reports progress first is an
 *   SSE stream, progress first and the result last;
 * - a client that hangs up mid-call cancels the call upstream, whether the endpoint sees a Fetch
 *   Request alone or, as in production, the Node request under @hono/node-server (its socket);
 * - results carry `resultType`, the cache fields of cacheable methods and the gateway's identity.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve as serveHono, type ServerType } from '@hono/node-server';
import { createMcpHandler, Server, type McpHttpHandler } from '@modelcontextprotocol/server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpEndpoint } from '../../src/inbound/endpoint.js';
import { incomingBodyOf } from '../../src/inbound/incoming-body.js';
import { SessionAdmission } from '../../src/session/session-admission.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { recordedStdin, recordingStdioServer } from '../integration/harness/upstreams.js';
import { waitUntil, within } from '../integration/harness/wait.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';

const VERSION = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let dir: string;
let stdinLog: string;
let registry: UpstreamRegistry;
let endpoint: McpEndpoint;
let reference: McpHttpHandler;
/** The endpoint behind @hono/node-server on 127.0.0.1, served as app.ts serves it (the Node request passed along). */
let hono: ServerType;
let honoUrl: string;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'request-2026-'));
  stdinLog = join(dir, 'stdin.log');
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: recordingStdioServer(newMarker(), stdinLog, { isolation: 'shared' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
  endpoint = new McpEndpoint({
    name: 'portcullis-test',
    version: '0.0.0',
    instructions: undefined,
    scope: { registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger },
    sessions: { max: 10, idleTimeoutMs: 60_000 },
    admission: new SessionAdmission({ max: 10, maxPerPrincipal: 10, initializePerMinute: 100, logger }),
    limits: { maxBytes: 65_536, maxDepth: 32 },
    logger,
    streamAfterMs: 1_000,
  });
  // The reference: the SDK's own 2026 entry over a plain SDK server declaring what the endpoint does.
  reference = createMcpHandler(
    () => new Server({ name: 'reference', version: '0.0.0' }, { capabilities: { tools: { listChanged: true }, logging: {} } }),
    { legacy: 'reject' },
  );
  const app = new Hono();
  app.post('/mcp', (c) => endpoint.fetch(c.req.raw, undefined, incomingBodyOf(c)));
  hono = serveHono({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await once(hono, 'listening');
  honoUrl = `http://127.0.0.1:${(hono.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  if (hono !== undefined) {
    (hono as unknown as { closeAllConnections(): void }).closeAllConnections();
    await new Promise<void>((resolve) => hono.close(() => resolve()));
  }
  await endpoint?.close();
  await reference?.close();
  await registry?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Headers = Record<string, string | undefined>;

/** Standard headers of a well-formed request of `method` (mirroring `name` when given). */
function standard(method: string, name?: string): Headers {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

function post(headers: Headers, body: unknown, signal?: AbortSignal): Request {
  const present = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return new Request('http://127.0.0.1/mcp', { method: 'POST', headers: present, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) });
}

function request(method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = ENVELOPE) {
  return { jsonrpc: '2.0', id: 'r1', method, params: { ...params, _meta: meta } };
}

async function answerOf(response: Response): Promise<{ status: number; body: unknown }> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** A case of the ladder: the same bytes to the gateway and to the SDK's reference entry. */
interface LadderCase {
  name: string;
  headers: Headers;
  body: unknown;
  /** What both must answer (the comparison is exact; this pins the case to what it tests). */
  status: number;
  code?: number;
}

const LADDER: LadderCase[] = [
  { name: 'a request without MCP-Protocol-Version', headers: { ...standard('tools/list'), 'mcp-protocol-version': undefined }, body: request('tools/list'), status: 400, code: -32020 },
  { name: 'a request without Mcp-Method', headers: { ...standard('tools/list'), 'mcp-method': undefined }, body: request('tools/list'), status: 400, code: -32020 },
  { name: 'a tools/call without Mcp-Name', headers: standard('tools/call'), body: request('tools/call', { name: 'fx__echo', arguments: { text: 'x' } }), status: 400, code: -32020 },
  { name: 'an Mcp-Name naming another tool', headers: standard('tools/call', 'fx__other'), body: request('tools/call', { name: 'fx__echo', arguments: { text: 'x' } }), status: 400, code: -32020 },
  { name: 'an Mcp-Name with a broken Base64 sentinel', headers: standard('tools/call', '=?base64?!!!?='), body: request('tools/call', { name: 'fx__echo', arguments: { text: 'x' } }), status: 400, code: -32020 },
  { name: 'a resources/read whose Mcp-Name is another URI', headers: standard('resources/read', 'test://other'), body: request('resources/read', { uri: 'test://static-text' }), status: 400, code: -32020 },
  { name: 'an MCP-Protocol-Version disagreeing with the envelope', headers: { ...standard('tools/list'), 'mcp-protocol-version': '2025-11-25' }, body: request('tools/list'), status: 400, code: -32020 },
  { name: 'an Mcp-Method disagreeing with the body', headers: standard('prompts/list'), body: request('tools/list'), status: 400, code: -32020 },
  {
    name: 'an envelope without clientCapabilities',
    headers: standard('tools/list'),
    body: request('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': VERSION }),
    status: 400,
    code: -32602,
  },
  {
    name: 'an envelope whose protocolVersion is not a string',
    headers: standard('tools/list'),
    body: request('tools/list', {}, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 20260728 }),
    status: 400,
    code: -32602,
  },
  { name: 'a 2026 header on a request without the envelope', headers: standard('tools/list'), body: { jsonrpc: '2.0', id: 'r1', method: 'tools/list', params: {} }, status: 400, code: -32602 },
  {
    name: 'a revision the gateway does not serve',
    headers: { ...standard('tools/list'), 'mcp-protocol-version': '2027-01-01' },
    body: request('tools/list', {}, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }),
    status: 400,
    code: -32022,
  },
  { name: 'ping, which 2026-07-28 removed', headers: standard('ping'), body: request('ping'), status: 404, code: -32601 },
  { name: 'initialize under a valid 2026 envelope', headers: standard('initialize'), body: request('initialize', { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } }), status: 404, code: -32601 },
  { name: 'logging/setLevel, which 2026-07-28 removed', headers: standard('logging/setLevel'), body: request('logging/setLevel', { level: 'info' }), status: 404, code: -32601 },
  { name: 'resources/subscribe, which 2026-07-28 removed', headers: standard('resources/subscribe'), body: request('resources/subscribe', { uri: 'test://x' }), status: 404, code: -32601 },
  { name: 'tasks/get where the tasks extension is not offered', headers: standard('tasks/get', 't1'), body: request('tasks/get', { taskId: 't1' }), status: 404, code: -32601 },
  { name: 'a JSON object that is no JSON-RPC message', headers: standard('tools/list'), body: { jsonrpc: '2.0', id: 'r1', params: { _meta: ENVELOPE } }, status: 400, code: -32600 },
  { name: 'a listen without a filter', headers: standard('subscriptions/listen'), body: request('subscriptions/listen'), status: 200, code: -32602 },
  { name: 'a listen whose filter is malformed', headers: standard('subscriptions/listen'), body: request('subscriptions/listen', { notifications: { toolsListChanged: 'yes' } }), status: 200, code: -32602 },
  { name: 'a 2026 notification', headers: { ...standard('notifications/cancelled'), 'mcp-method': undefined }, body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r0', _meta: ENVELOPE } }, status: 202 },
  { name: 'a notification named 2026 by its header alone', headers: standard('notifications/progress'), body: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }, status: 202 },
];

describe('the 2026 validation ladder, against the SDK’s own entry', () => {
  it.each(LADDER)('answers $name exactly as the SDK does', async ({ headers, body, status, code }) => {
    const gateway = await answerOf(await endpoint.fetch(post(headers, body)));
    const direct = await answerOf(await reference.fetch(post(headers, body)));
    expect(gateway).toEqual(direct);
    expect(gateway.status).toBe(status);
    if (code !== undefined) expect((gateway.body as { error: { code: number } }).error.code).toBe(code);
  });

  it('serves a tools/call whose Mcp-Name carries the name Base64-encoded, with optional whitespace around it', async () => {
    const sentinel = ` =?base64?${Buffer.from('fx__echo').toString('base64')}?= `;
    const response = await endpoint.fetch(post(standard('tools/call', sentinel), request('tools/call', { name: 'fx__echo', arguments: { text: 'sentinel' } })));
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { result: { content: Array<{ text: string }> } };
    expect(answer.result.content[0]!.text).toBe('sentinel');
  });
});

describe('answers and streams', () => {
  it('answers a call whose result is all it sends with one JSON body, encoded for 2026-07-28', async () => {
    const response = await endpoint.fetch(post(standard('tools/call', 'fx__echo'), request('tools/call', { name: 'fx__echo', arguments: { text: 'hello' } })));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const answer = (await response.json()) as { id: string; result: Record<string, unknown> };
    expect(answer.id).toBe('r1');
    expect(answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'hello' }] });
    expect((answer.result._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'portcullis-test', version: '0.0.0' });
    // A call's result is not cacheable: no cache fields are added to it.
    expect(answer.result).not.toHaveProperty('ttlMs');
  });

  it('gives a list its cache fields and the gateway’s identity', async () => {
    const response = await endpoint.fetch(post(standard('tools/list'), request('tools/list')));
    const answer = (await response.json()) as { result: Record<string, unknown> };
    expect(answer.result).toMatchObject({ resultType: 'complete', cacheScope: expect.stringMatching(/^(public|private)$/) });
    expect(Number.isSafeInteger(answer.result.ttlMs)).toBe(true);
    expect((answer.result._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'portcullis-test', version: '0.0.0' });
    expect((answer.result.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain('fx__slow');
  });

  it('streams a call that reports progress: the progress first, then the result, on one SSE answer', async () => {
    const response = await endpoint.fetch(
      post(standard('tools/call', 'fx__slow'), request('tools/call', { name: 'fx__slow', arguments: { ms: 60, steps: 3 } }, { ...ENVELOPE, progressToken: 'p-1' })),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = (await within(response.text(), 10_000, 'the stream ended'))
      .split('\n\n')
      .filter((event) => event.startsWith('event: message'))
      .map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 6)) as Record<string, unknown>);
    const progress = events.filter((event) => event.method === 'notifications/progress');
    expect(progress.length).toBe(3);
    expect(progress.every((event) => (event.params as Record<string, unknown>).progressToken === 'p-1')).toBe(true);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ id: 'r1', result: { resultType: 'complete', content: [{ type: 'text', text: 'slept 60ms' }] } });
  });

  it('cancels the call upstream when the client hangs up, and keeps nothing of it', async () => {
    const abort = new AbortController();
    const answer = endpoint.fetch(post(standard('tools/call', 'fx__slow'), request('tools/call', { name: 'fx__slow', arguments: { ms: 60_000, steps: 600 } }, { ...ENVELOPE, progressToken: 'p-2' }), abort.signal));
    await waitUntil(() => recordedStdin(stdinLog).some((m) => m.method === 'tools/call' && (m.params?.arguments as { ms?: number } | undefined)?.ms === 60_000), 'the call reached the upstream');
    const call = recordedStdin(stdinLog).find((m) => m.method === 'tools/call' && (m.params?.arguments as { ms?: number } | undefined)?.ms === 60_000)!;
    const response = await answer;
    // The progress opened a stream; the client reads a little, then goes.
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    abort.abort();
    await response.body?.cancel().catch(() => undefined);
    await waitUntil(
      () => recordedStdin(stdinLog).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call.id),
      'the upstream was told the call is cancelled',
    );
  });

  it('cancels a call answered in JSON when the client closes its connection (the Node request’s socket, as in production)', async () => {
    const abort = new AbortController();
    const ms = 45_000;
    const pending = fetch(honoUrl, {
      method: 'POST',
      headers: standard('tools/call', 'fx__slow') as Record<string, string>,
      // No progress token: nothing is sent before the result, so the answer would be one JSON body.
      body: JSON.stringify(request('tools/call', { name: 'fx__slow', arguments: { ms, steps: 450 } })),
      signal: abort.signal,
    }).catch((error: unknown) => error);
    const isThisCall = (m: { method?: string; params?: Record<string, unknown> }) =>
      m.method === 'tools/call' && (m.params?.arguments as { ms?: number } | undefined)?.ms === ms;
    await waitUntil(() => recordedStdin(stdinLog).some(isThisCall), 'the call reached the upstream');
    const call = recordedStdin(stdinLog).find(isThisCall)!;
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitUntil(
      () => recordedStdin(stdinLog).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call.id),
      'the upstream was told the call is cancelled',
    );
  });
});
