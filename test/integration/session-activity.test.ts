/**
 * A 2025 session's life follows its activity, not the clock alone: a long call keeps it alive past
 * the idle timeout, and a request id stays taken until its response is sent — even when the
 * client that sent it has hung up (a reused id must never receive the earlier call's result).
 *
 * Nothing here sleeps to synchronise: expiry is observed through the gateway's own
 * `session closed` log line, a call is known to be in flight once its SSE answer has started.
 */
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { sessionTag } from '../../src/observability/session-tag.js';
import { assertBuilt, Cleanup, connectClient, gatewayConfig, MCP_POST_HEADERS, newMarker, openRawSession, stdioServer, textOf, waitUntil, within } from './harness.js';

const cleanup = new Cleanup();
let gateway: RunningGateway;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  assertBuilt();
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = gatewayConfig({ fx: stdioServer(newMarker()) }, { sessions: { idleTimeoutMs: 400 } });
  gateway = await startGateway({ config, logger: createLogger({ level: 'info', destination: destination as never }), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterAll(() => cleanup.run());

/** Resolves once the gateway has logged that session `id` expired (its idle timeout passed). */
function expired(id: string): Promise<unknown> {
  const tag = sessionTag(id);
  return waitUntil(() => logLines.find((l) => l.msg === 'session closed' && l.session === tag && l.reason === 'expired'), `session ${tag} expired`);
}

function resultText(body: string): string | undefined {
  const line = body.split('\n').find((l) => l.startsWith('data: ') && l.includes('"result"'));
  const message = JSON.parse(line === undefined ? body : line.slice('data: '.length)) as { result?: { content?: Array<{ text?: string }> } };
  return message.result?.content?.[0]?.text;
}

/**
 * Starts a long POST and resolves once its answer has started (the call is in flight then), with
 * `hangUp` to go away like a client that lost interest.
 */
function startedPost(url: string, headers: Record<string, string>, body: string): Promise<{ hangUp(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest({ host: '127.0.0.1', port: target.port, path: target.pathname, method: 'POST', headers });
    const closed = new Promise<void>((done) => req.on('close', () => done()));
    req.on('response', (response) => {
      if (response.statusCode !== 200) reject(new Error(`POST answered ${response.statusCode}`));
      response.on('error', () => undefined);
      resolve({
        hangUp: () => {
          req.destroy();
          return closed;
        },
      });
    });
    req.on('error', (error) => reject(error));
    req.end(body);
  });
}

/** A `slow` call whose first progress notification turns its answer into an SSE stream at once. */
function slowCall(id: number, ms: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms, steps: ms / 50 }, _meta: { progressToken: `p${id}` } } });
}

describe('session activity', () => {
  it('keeps a session alive through a call longer than the idle timeout', async () => {
    // The call waits on the client's answer to a sampling request, given only once another,
    // idle session has expired: the call outlasts the idle timeout by construction.
    let answer: (() => void) | undefined;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { client, transport } = await connectClient(cleanup, gateway.url, '2025', {
      capabilities: { sampling: {} },
      setup: (c) =>
        c.setRequestHandler('sampling/createMessage', async () => {
          answer?.();
          await released;
          return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'late' } };
        }),
    });
    const idle = await openRawSession(gateway.url);
    const call = client.callTool({ name: 'fx__test_sampling', arguments: { prompt: 'wait' } });
    await asked;
    await expired(idle.id);
    release();
    expect(textOf(await call)).toBe('LLM response: late');
    expect(logLines.some((l) => l.msg === 'session closed' && l.session === sessionTag(transport.sessionId!))).toBe(false);
    expect(textOf(await client.callTool({ name: 'fx__echo', arguments: { text: 'still here' } }))).toBe('still here');
  });

  it('expires a session that stays idle past the timeout', async () => {
    const session = await openRawSession(gateway.url);
    // Any request is activity, so the test stays silent until the gateway says it expired, then looks.
    await expired(session.id);
    expect((await session.post({ id: 2, method: 'ping' })).status).toBe(404);
  });

  it('keeps a request id taken until its response is sent, even after the client hung up', async () => {
    const session = await openRawSession(gateway.url);
    const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' };
    await (await startedPost(gateway.url, headers, slowCall(7, 1000))).hangUp();

    const reuse = await session.post({ id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'second' } } });
    expect(reuse.status).toBe(400);
    expect(reuse.json().error?.message).toMatch(/already in flight/);

    // Once the first call has answered (to nobody), the id is free again and gets its own result.
    await waitUntil(
      async () => {
        const again = await session.post({ id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'third' } } });
        return again.status === 200 && resultText(again.body) === 'third';
      },
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
    const pending = await startedPost(gateway.url, sseHeaders, slowCall(32, 3000));
    expect((await session.post({ method: 'notifications/cancelled', params: { requestId: 32, reason: 'test' } })).status).toBe(202);
    const reused = await session.post({ id: 32, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'after-cancel' } } });
    expect(resultText(reused.body)).toBe('after-cancel');
    await pending.hangUp();
  });
});
