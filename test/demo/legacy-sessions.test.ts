import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createLegacySessions, type LegacySessions } from '../../demo/lib/legacy-sessions.js';

const URL_ = 'http://127.0.0.1/mcp';
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

function post(body: unknown, sessionId?: string): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' }),
    },
    body: JSON.stringify(body),
  });
}

async function open(sessions: LegacySessions): Promise<string> {
  const response = await sessions.handle(post(initialize), initialize);
  await response.body?.cancel();
  const id = response.headers.get('mcp-session-id');
  if (id === null) throw new Error(`initialize failed with HTTP ${response.status}`);
  return id;
}

async function statusOf(sessions: LegacySessions, sessionId: string): Promise<number> {
  const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
  const response = await sessions.handle(post(ping, sessionId), ping);
  await response.body?.cancel();
  return response.status;
}

describe('legacy sessions', () => {
  let sessions: LegacySessions;
  afterEach(async () => {
    await sessions.closeAll();
  });

  const create = (maxSessions: number) =>
    createLegacySessions({ factory: () => new McpServer({ name: 't', version: '1' }, { capabilities: {} }), maxSessions });

  it('serves a session it issued and answers 404 for one it did not', async () => {
    sessions = create(4);
    const id = await open(sessions);
    expect(await statusOf(sessions, id)).toBe(200);
    expect(await statusOf(sessions, 'made-up')).toBe(404);
  });

  it('refuses a non-initialize request without a session id', async () => {
    sessions = create(4);
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await sessions.handle(post(ping), ping)).status).toBe(400);
  });

  it('closes the least recently used session when over its cap', async () => {
    sessions = create(2);
    const first = await open(sessions);
    const second = await open(sessions);
    expect(await statusOf(sessions, first)).toBe(200); // first is now the most recently used
    const third = await open(sessions);
    expect(sessions.size).toBe(2);
    expect(await statusOf(sessions, second)).toBe(404);
    expect(await statusOf(sessions, first)).toBe(200);
    expect(await statusOf(sessions, third)).toBe(200);
  });

  it('forgets a session once the client deletes it', async () => {
    sessions = create(4);
    const id = await open(sessions);
    const deleted = await sessions.handle(
      new Request(URL_, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } }),
      undefined,
    );
    expect(deleted.status).toBe(200);
    expect(await statusOf(sessions, id)).toBe(404);
  });

  it('rejects a cap that is not a positive integer', () => {
    expect(() => createLegacySessions({ factory: () => new McpServer({ name: 't', version: '1' }), maxSessions: 0 })).toThrow(
      TypeError,
    );
    sessions = create(1);
  });
});
