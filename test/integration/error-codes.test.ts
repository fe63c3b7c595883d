/**
 * One condition, one answer (docs/errors.md), from a real gateway over HTTP: an unknown session
 * is 404 with -32600 `SESSION_NOT_FOUND` whether the id never existed or its session has ended;
 * too many sessions is 503 with -32001 `SESSION_LIMIT` on every endpoint; a body that is not JSON
 * is 400 with -32700. Each refusal is a whole JSON-RPC error response with `"id": null`, since
 * the request's id is unknown to the gateway (JSON-RPC 2.0 §5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  Cleanup,
  killPids,
  MCP_POST_HEADERS,
  newMarker,
  openRawSession,
  processesWithMarker,
  rawRequest,
  sideChannelUrl,
  startTestGateway,
  stdioServer,
  initializeBody,
  type RawResponse,
} from './harness.js';

const perFile = new Cleanup();
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const marker = newMarker();
  perFile.add(() => killPids(processesWithMarker(marker)));
  gateway = await startTestGateway(perFile, { fx: stdioServer(marker) }, { sessions: { max: 1 } });
});
afterAll(() => perFile.run());

const SESSION_HEADERS = { ...MCP_POST_HEADERS, 'mcp-protocol-version': '2025-11-25' };
const PING = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });

const SESSION_NOT_FOUND = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Session not found', data: { code: 'SESSION_NOT_FOUND' } } };

function body(response: RawResponse): unknown {
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(response.body);
}

describe('an unknown session', () => {
  it('is 404 -32600 SESSION_NOT_FOUND with id null, on every method', async () => {
    for (const [method, payload] of [['POST', PING], ['GET', undefined], ['DELETE', undefined]] as const) {
      const response = await rawRequest(gateway.url, {
        method,
        headers: { ...SESSION_HEADERS, 'mcp-session-id': 'no-such-session' },
        body: payload,
      });
      expect(response.status, method).toBe(404);
      expect(body(response), method).toEqual(SESSION_NOT_FOUND);
    }
  });

  it('is answered exactly alike when the session existed and has ended', async () => {
    const session = await openRawSession(gateway.url);
    expect((await session.delete()).status).toBe(200);
    const after = await session.post({ id: 8, method: 'ping' });
    expect(after.status).toBe(404);
    expect(body(after)).toEqual(SESSION_NOT_FOUND);
  });
});

describe('too many sessions', () => {
  it('is 503 -32001 SESSION_LIMIT with id null, on the aggregate endpoint and a side channel alike', async () => {
    const held = await openRawSession(gateway.url);
    try {
      for (const url of [gateway.url, sideChannelUrl(gateway.url, 'fx')]) {
        const refused = await rawRequest(url, { headers: MCP_POST_HEADERS, body: initializeBody() });
        expect(refused.status, url).toBe(503);
        expect(refused.headers['mcp-session-id']).toBeUndefined();
        expect(body(refused), url).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Too many sessions; try again later', data: { code: 'SESSION_LIMIT' } },
        });
      }
    } finally {
      await held.delete();
    }
  });
});

describe('a body that is not JSON', () => {
  it('is 400 -32700 PARSE_ERROR with id null, with or without a session', async () => {
    const session = await openRawSession(gateway.url);
    try {
      for (const headers of [MCP_POST_HEADERS, { ...SESSION_HEADERS, 'mcp-session-id': session.id }]) {
        const response = await rawRequest(gateway.url, { headers, body: '{"jsonrpc": "2.0", "id": 3, "method": "ping"' });
        expect(response.status).toBe(400);
        expect(body(response)).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: 'Parse error: body is not valid JSON', data: { code: 'PARSE_ERROR' } },
        });
      }
    } finally {
      await session.delete();
    }
  });

  it('is not confused with a JSON value that is not a JSON-RPC message (-32600, id null)', async () => {
    const session = await openRawSession(gateway.url);
    try {
      const response = await rawRequest(gateway.url, {
        headers: { ...SESSION_HEADERS, 'mcp-session-id': session.id },
        body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', extra: true }),
      });
      expect(response.status).toBe(400);
      expect(body(response)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'INVALID_REQUEST' } } });
    } finally {
      await session.delete();
    }
  });
});
