/**
 * Malformed and unwelcome HTTP requests get the right status and a JSON-RPC error body from a
 * real gateway, before anything reaches an upstream (MCP 2025-11-25 Streamable HTTP: session
 * header rules, DNS-rebinding Host check; JSON-RPC 2.0 parse/invalid-request codes). Driven with
 * node:http so the Host header and the body bytes are exactly what the test says.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  Cleanup,
  initializeBody,
  killPids,
  MCP_POST_HEADERS,
  newMarker,
  processesWithMarker,
  rawRequest,
  sideChannelUrl,
  startTestGateway,
  stdioServer,
  type RawResponse,
} from './harness.js';

const perFile = new Cleanup();
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const marker = newMarker();
  perFile.add(() => killPids(processesWithMarker(marker)));
  gateway = await startTestGateway(perFile, { stdio: stdioServer(marker) });
});
afterAll(() => perFile.run());

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const LEGACY_VERSION = { 'mcp-protocol-version': '2025-11-25' };

/** The JSON-RPC error code of an error response, after checking it is one. */
function rpcErrorCode(response: RawResponse): number | undefined {
  const body = response.json();
  expect(body.jsonrpc).toBe('2.0');
  return body.error?.code;
}

describe('requests without a session', () => {
  it.each([
    ['GET', undefined],
    ['DELETE', undefined],
    ['POST', TOOLS_LIST],
  ])('answers %s without Mcp-Session-Id (other than initialize) with 400', async (method, body) => {
    const response = await rawRequest(gateway.url, {
      method,
      headers: method === 'POST' ? { ...MCP_POST_HEADERS, ...LEGACY_VERSION } : { accept: 'text/event-stream', ...LEGACY_VERSION },
      body,
    });
    expect(response.status).toBe(400);
    expect(rpcErrorCode(response)).toBe(-32600);
  });

  it.each(['GET', 'POST', 'DELETE'])('answers %s with an unknown Mcp-Session-Id with 404', async (method) => {
    const response = await rawRequest(gateway.url, {
      method,
      headers: { ...MCP_POST_HEADERS, ...LEGACY_VERSION, 'mcp-session-id': randomUUID() },
      body: method === 'POST' ? TOOLS_LIST : undefined,
    });
    expect(response.status).toBe(404);
    expect(rpcErrorCode(response)).toBe(-32600);
  });
});

describe('request bodies', () => {
  it('answers a non-JSON content type with 415', async () => {
    const response = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, 'content-type': 'text/plain' },
      body: initializeBody(),
    });
    expect(response.status).toBe(415);
    expect(rpcErrorCode(response)).toBe(-32600);
  });

  it('answers a body that is not valid JSON with 400 and -32700', async () => {
    const response = await rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS }, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(response.status).toBe(400);
    expect(rpcErrorCode(response)).toBe(-32700);
  });

  it('answers a JSON-RPC batch with 400 and -32600', async () => {
    const response = await rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS }, body: `[${initializeBody(1)}, ${TOOLS_LIST}]` });
    expect(response.status).toBe(400);
    expect(rpcErrorCode(response)).toBe(-32600);
  });

  it('answers a body over 1 MiB with 413', async () => {
    const padding = 'x'.repeat(1024 * 1024);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: padding } } });
    const response = await rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, ...LEGACY_VERSION }, body });
    expect(response.status).toBe(413);
  });
});

describe('the Host header', () => {
  it('refuses a Host that is not allowed with 403', async () => {
    const response = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, host: `evil.example.com:${gateway.port}` },
      body: initializeBody(),
    });
    expect(response.status).toBe(403);
    expect(rpcErrorCode(response)).toBe(-32600);
  });

  it('refuses a disallowed Host on a per-server side channel too', async () => {
    const response = await rawRequest(sideChannelUrl(gateway.url, 'stdio'), {
      headers: { ...MCP_POST_HEADERS, host: 'attacker.test' },
      body: initializeBody(),
    });
    expect(response.status).toBe(403);
  });

  it('admits localhost as the Host (the check is not refusing everything)', async () => {
    const response = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS, host: `localhost:${gateway.port}` },
      body: initializeBody(),
    });
    expect(response.status).toBe(200);
    const session = response.headers['mcp-session-id'];
    expect(typeof session).toBe('string');
    await rawRequest(gateway.url, { method: 'DELETE', headers: { 'mcp-session-id': String(session), ...LEGACY_VERSION } });
  });
});

describe('paths', () => {
  it('answers a side channel of a server that is not configured with 404', async () => {
    const response = await rawRequest(sideChannelUrl(gateway.url, 'nope'), { headers: { ...MCP_POST_HEADERS }, body: initializeBody() });
    expect(response.status).toBe(404);
  });
});
