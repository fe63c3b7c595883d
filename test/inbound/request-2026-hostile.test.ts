/**
 * Hostile bytes on the 2026-07-28 path of a real gateway on 127.0.0.1, each sent alike to the
 * SDK's own 2026 entry (`createMcpHandler`, served on 127.0.0.1 beside it) as the reference:
 * batches, responses and notifications posted where requests belong, ids of every odd type,
 * missing, malformed, oversized and disagreeing `MCP-Protocol-Version` / `Mcp-Method` /
 * `Mcp-Name` headers and envelope fields. Every refusal the SDK makes at its validation ladder
 * is made by the gateway with the same HTTP status and the same JSON-RPC error (code, message,
 * data, id); where the gateway answers differently it is listed below with its own exact answer
 * and why. Nothing crashes or hangs: after the whole barrage the gateway holds no call and
 * answers a well-formed one. An upstream's result the revision cannot carry is refused, and what
 * of it reaches the log is bounded.
 */
import { serve, type ServerType } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningGateway } from '../../src/gateway.js';
import { encodeResult, UnencodableResult } from '../../src/inbound/request-2026.js';
import { assertBuilt, Cleanup, newMarker, rawRequest, startTestGateway, stdioServer, type RawResponse } from '../integration/harness.js';
import { envelope2026, VERSION_2026 } from '../integration/harness/raw-2026.js';

const cleanup = new Cleanup();
let gateway: RunningGateway;
let reference: string;

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway(cleanup, { fx: stdioServer(newMarker()) });
  // The reference serves a tool of the name the cases call, so the SDK refuses only at its ladder.
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'reference', version: '0.0.0' });
      server.registerTool('fx__echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({ content: [{ type: 'text', text }] }));
      return server;
    },
    { legacy: 'reject' },
  );
  const server: ServerType = serve({ fetch: handler.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  reference = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanup.add(() => handler.close());
});
afterAll(() => cleanup.run());

const ENVELOPE = envelope2026();

function headers(method: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': VERSION_2026,
    ...(method === undefined ? {} : { 'mcp-method': method }),
    ...extra,
  };
}

const call = (id: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: ENVELOPE }, ...extra });

interface Case {
  name: string;
  headers: Record<string, string>;
  body: string;
}

const json = (value: unknown) => JSON.stringify(value);

/** Bytes both entries refuse at the ladder, identically. */
const SAME: Case[] = [
  { name: 'an id of null', headers: headers('tools/list'), body: json(call(null)) },
  { name: 'an object id', headers: headers('tools/list'), body: json(call({ nested: 1 })) },
  { name: 'an array id', headers: headers('tools/list'), body: json(call([1])) },
  { name: 'a boolean id', headers: headers('tools/list'), body: json(call(true)) },
  { name: 'a fractional id', headers: headers('tools/list'), body: json(call(1.5)) },
  { name: 'an id of 1e300', headers: headers('tools/list'), body: json(call(1e300)) },
  { name: 'jsonrpc "1.0"', headers: headers('tools/list'), body: json(call(1, { jsonrpc: '1.0' })) },
  { name: 'no jsonrpc member', headers: headers('tools/list'), body: json({ id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }) },
  { name: 'a numeric method', headers: headers('tools/list'), body: json({ jsonrpc: '2.0', id: 1, method: 5, params: { _meta: ENVELOPE } }) },
  { name: 'params that are an array', headers: headers('tools/list'), body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [ENVELOPE] }) },
  { name: '_meta that is an array', headers: headers('tools/list'), body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: [] } }) },
  { name: 'a request carrying a result member too', headers: headers('tools/list'), body: json(call(1, { result: {} })) },
  { name: 'an empty method and no Mcp-Method', headers: headers(undefined), body: json({ jsonrpc: '2.0', id: 1, method: '', params: { _meta: ENVELOPE } }) },
  { name: 'a 4,000-character MCP-Protocol-Version', headers: headers('tools/list', { 'mcp-protocol-version': 'x'.repeat(4_000) }), body: json(call(1)) },
  { name: 'an empty MCP-Protocol-Version', headers: headers('tools/list', { 'mcp-protocol-version': '' }), body: json(call(1)) },
  {
    name: 'a future revision in header and envelope',
    headers: headers('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
    body: json(call(1, { params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } })),
  },
  {
    name: 'a 3,000-character revision in header and envelope',
    headers: headers('tools/list', { 'mcp-protocol-version': 'y'.repeat(3_000) }),
    body: json(call(1, { params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 'y'.repeat(3_000) } } })),
  },
  { name: 'a clientInfo that is a number', headers: headers('tools/list'), body: json(call(1, { params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 5 } } })) },
  { name: 'clientCapabilities that are an array', headers: headers('tools/list'), body: json(call(1, { params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': [] } } })) },
  { name: 'no params at all under a 2026 header', headers: headers('tools/list'), body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  { name: 'an Mcp-Method of another case', headers: headers('Tools/List'), body: json(call(1)) },
  { name: 'an Mcp-Method naming another method', headers: headers('prompts/list'), body: json(call('m')) },
  {
    name: 'a notification whose Mcp-Method names another',
    headers: headers('notifications/progress'),
    body: json({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: ENVELOPE } }),
  },
  {
    name: 'an Mcp-Name disagreeing with params.name',
    headers: headers('tools/call', { 'mcp-name': 'fx__other' }),
    body: json({ jsonrpc: '2.0', id: 'n', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'x' }, _meta: ENVELOPE } }),
  },
  {
    name: 'an Mcp-Name whose Base64 sentinel is not Base64',
    headers: headers('tools/call', { 'mcp-name': '=?base64?%%%?=' }),
    body: json({ jsonrpc: '2.0', id: 'n', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'x' }, _meta: ENVELOPE } }),
  },
  {
    name: 'an Mcp-Name whose Base64 is not UTF-8',
    headers: headers('tools/call', { 'mcp-name': `=?base64?${Buffer.from([0xff, 0xfe, 0xfd]).toString('base64')}?=` }),
    body: json({ jsonrpc: '2.0', id: 'n', method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'x' }, _meta: ENVELOPE } }),
  },
  { name: 'ping, which 2026-07-28 removed', headers: headers('ping'), body: json({ jsonrpc: '2.0', id: 'p', method: 'ping', params: { _meta: ENVELOPE } }) },
  {
    name: 'a notification with the envelope and no standard headers',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: json({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: ENVELOPE } }),
  },
];

/** The parts of an answer a client acts on: the status and the JSON-RPC message (key order aside). */
function answerOf(response: RawResponse): { status: number; message: unknown } {
  return { status: response.status, message: response.body === '' ? undefined : JSON.parse(response.body) };
}

describe('hostile 2026 bytes the SDK refuses at its ladder', () => {
  it.each(SAME)('$name: the same status and JSON-RPC error as the SDK', async ({ headers, body }) => {
    const [gatewayAnswer, sdkAnswer] = await Promise.all([rawRequest(gateway.url, { headers, body }), rawRequest(reference, { headers, body })]);
    expect(answerOf(gatewayAnswer)).toEqual(answerOf(sdkAnswer));
    expect([202, 400, 404]).toContain(gatewayAnswer.status);
  });
});

describe('where the gateway answers otherwise, on purpose', () => {
  it('refuses a JSON-RPC batch 400/-32600 before reading any element (both eras; MCP 2025-06-18 removed batching)', async () => {
    for (const body of [json([call(1), call(2)]), '[]', json([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }])]) {
      const [answer, sdk] = await Promise.all([rawRequest(gateway.url, { headers: headers('tools/list'), body }), rawRequest(reference, { headers: headers('tools/list'), body })]);
      // The SDK words each kind of batch differently; status and code agree.
      expect(sdk.status).toBe(400);
      expect(answer.status).toBe(400);
      expect(answer.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'JSON-RPC batches are not supported', data: { code: 'INVALID_REQUEST' } } });
    }
  });

  it('refuses a JSON-RPC response from a 2026 client as the SDK does, without asking it for a session id its revision has no use for', async () => {
    for (const body of [json({ jsonrpc: '2.0', id: 1, result: {} }), json({ jsonrpc: '2.0', id: 'e', error: { code: -32000, message: 'no' } })]) {
      const [answer, sdk] = await Promise.all([rawRequest(gateway.url, { headers: headers(undefined), body }), rawRequest(reference, { headers: headers(undefined), body })]);
      expect(answerOf(answer)).toEqual(answerOf(sdk));
      expect(answer.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad Request: JSON-RPC responses cannot be posted to this endpoint' } });
    }
  });

  it('serves 2025-era traffic on the same path: a request with no envelope and a 2025 header needs a session, not a 2026 revision', async () => {
    const answer = await rawRequest(gateway.url, { headers: headers('tools/list', { 'mcp-protocol-version': '2025-11-25' }), body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    expect(answer.status).toBe(400);
    expect(answer.json().error).toMatchObject({ code: -32600, message: 'Bad Request: Mcp-Session-Id header is required' });
  });

  it('echoes an id of any length or content it accepts (JSON-RPC 2.0 §5), within the body limit', async () => {
    for (const id of ['', 'x'.repeat(200_000), '\u0000\u2028"\\', 0, Number.MAX_SAFE_INTEGER, -1]) {
      const answer = await rawRequest(gateway.url, { headers: headers('tools/list'), body: json(call(id)) });
      expect(answer.status).toBe(200);
      const message = answer.json() as { id: unknown; result?: { tools?: unknown[] } };
      expect(message.id).toEqual(id);
      expect(message.result?.tools?.length).toBeGreaterThan(0);
    }
  });

  it('refuses what the HTTP edge sees first: a body over the limit 413, no JSON 400/-32700, too deep 400/-32600, not JSON 415, a header block over the limit 431', async () => {
    const tooBig = await rawRequest(gateway.url, { headers: headers('tools/list'), body: json(call('x'.repeat(2 * 1024 * 1024))) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json().error?.code).toBe(-32600);
    const notJson = await rawRequest(gateway.url, { headers: headers('tools/list'), body: '{"jsonrpc":"2.0",' });
    expect([notJson.status, notJson.json().error?.code]).toEqual([400, -32700]);
    const deep = await rawRequest(gateway.url, { headers: headers('tools/list'), body: `${'['.repeat(10_000)}${']'.repeat(10_000)}` });
    expect([deep.status, deep.json().error?.code]).toEqual([400, -32600]);
    const text = await rawRequest(gateway.url, { headers: { ...headers('tools/list'), 'content-type': 'text/plain' }, body: json(call(1)) });
    expect([text.status, text.json().error?.code]).toEqual([415, -32600]);
    const headerBlock = await rawRequest(gateway.url, { headers: headers('tools/call', { 'mcp-name': 'n'.repeat(64 * 1024) }), body: json(call(1)) });
    expect(headerBlock.status).toBe(431);
  });
});

describe('after the barrage', () => {
  it('holds no call and answers a well-formed one', async () => {
    const metrics = await (await fetch(new URL('/metrics', gateway.url))).text();
    expect(metrics).toMatch(/^portcullis_calls_in_flight 0$/m);
    const params = { name: 'fx__echo', arguments: { text: 'still here' }, _meta: ENVELOPE };
    const answer = await rawRequest(gateway.url, { headers: headers('tools/call', { 'mcp-name': 'fx__echo' }), body: json({ jsonrpc: '2.0', id: 'last', method: 'tools/call', params }) });
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ id: 'last', result: { resultType: 'complete', content: [{ type: 'text', text: 'still here' }] } });
  });
});

describe('a hostile upstream result, as the revision encodes it', () => {
  const serverInfo = { name: 'portcullis', version: '0.0.0' };

  it('refuses a resultType its method does not have, naming at most 64 characters of it for the log', () => {
    for (const resultType of ['x'.repeat(1_000_000), { nested: 'y'.repeat(100_000) }, 42]) {
      let message = '';
      try {
        encodeResult('completion/complete', { resultType, completion: { values: [] } }, serverInfo);
      } catch (error) {
        expect(error).toBeInstanceOf(UnencodableResult);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^completion\/complete returned resultType .+, which only tools\/call, prompts\/get and resources\/read may$/);
      expect(message.length).toBeLessThan(200);
    }
  });

  it('passes an input_required of the multi-round-trip methods, and stamps every result with the gateway, not the upstream', () => {
    expect(encodeResult('tools/call', { resultType: 'input_required', inputRequests: {} }, serverInfo)).toMatchObject({ resultType: 'input_required' });
    const listed = encodeResult('tools/list', { tools: [{ name: 't', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } }] }, serverInfo);
    expect(listed).toEqual({
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo },
    });
  });
});
