/**
 * A 2025 session's life follows its activity, not the clock alone: a long call keeps it alive past
 * the idle timeout, and a request id stays taken until its response is sent — even when the
 * client that sent it has hung up (a reused id must never receive the earlier call's result).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, MCP_POST_HEADERS, newMarker, openRawSession, stdioServer, startTestGateway, waitUntil } from './harness.js';

const cleanup = new Cleanup();
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway(cleanup, { fx: stdioServer(newMarker()) }, { sessions: { idleTimeoutMs: 400 } });
});
afterAll(() => cleanup.run());

function resultText(body: string): string | undefined {
  const line = body.split('\n').find((l) => l.startsWith('data: ') && l.includes('"result"'));
  const message = JSON.parse(line === undefined ? body : line.slice('data: '.length)) as { result?: { content?: Array<{ text?: string }> } };
  return message.result?.content?.[0]?.text;
}

/** Starts a POST and abandons it after `afterMs`, like a client that went away. */
function abandonedPost(url: string, headers: Record<string, string>, body: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const req = httpRequest({ host: '127.0.0.1', port: target.port, path: target.pathname, method: 'POST', headers });
    req.on('error', () => resolve());
    req.end(body);
    setTimeout(() => {
      req.destroy();
      resolve();
    }, afterMs);
  });
}

describe('session activity', () => {
  it('keeps a session alive through a call longer than the idle timeout', async () => {
    const session = await openRawSession(gateway.url);
    const answer = await session.post({ id: 1, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 1200, steps: 2 } } });
    expect(answer.status).toBe(200);
    expect(resultText(answer.body)).toBe('slept 1200ms');
  });

  it('expires a session that stays idle past the timeout', async () => {
    const session = await openRawSession(gateway.url);
    // Any request is activity, so the test stays silent for well past the timeout, then looks.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect((await session.post({ id: 2, method: 'ping' })).status).toBe(404);
  });

  it('keeps a request id taken until its response is sent, even after the client hung up', async () => {
    const session = await openRawSession(gateway.url);
    const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' };
    const slow = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 1000, steps: 4 } } });
    await abandonedPost(gateway.url, headers, slow, 150);

    const reuse = await session.post({ id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'second' } } });
    expect(reuse.status).toBe(400);
    expect(reuse.json().error?.message).toMatch(/already in flight/);

    // Once the first call has answered (to nobody), the id is free again and gets its own result.
    await waitUntil(
      async () => {
        const again = await session.post({ id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'third' } } });
        return again.status === 200 && resultText(again.body) === 'third';
      },
      5_000,
      'id 7 free again',
    );
  });

  it('frees the id of a request the transport refused, and of a request the client cancelled', async () => {
    const session = await openRawSession(gateway.url);
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' };
    const refused = await fetch(gateway.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 31, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'x' } } }),
    });
    expect(refused.status).toBe(406);
    const again = await session.post({ id: 31, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'after-406' } } });
    expect(resultText(again.body)).toBe('after-406');

    const sseHeaders = { ...MCP_POST_HEADERS, 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' };
    const slow = JSON.stringify({ jsonrpc: '2.0', id: 32, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 3000, steps: 3 } } });
    const pending = abandonedPost(gateway.url, sseHeaders, slow, 2_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await session.post({ method: 'notifications/cancelled', params: { requestId: 32, reason: 'test' } })).status).toBe(202);
    const reused = await session.post({ id: 32, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'after-cancel' } } });
    expect(resultText(reused.body)).toBe('after-cancel');
    await pending;
  });
});
