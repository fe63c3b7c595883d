/**
 * The one ledger of a session's in-flight request ids (request-ledger.ts), on its own and as each
 * wire uses it: a duplicate id refused while the first is open, freed by the response or the
 * client's cancellation, a bound on how many may be open, and `1` and `"1"` kept apart.
 */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { cancelledRequestId, RequestLedger } from '../../src/inbound/request-ledger.js';
import { SseSessionTransport } from '../../src/inbound/legacy-sse/sse-session-transport.js';

async function errorOf(response: Response | undefined): Promise<{ status: number; id: unknown; code: number }> {
  expect(response).toBeDefined();
  const body = (await response!.json()) as { id: unknown; error: { code: number } };
  return { status: response!.status, id: body.id, code: body.error.code };
}

describe('RequestLedger', () => {
  it('refuses an id already in flight with 400 and id null, and admits it again once released', async () => {
    const ledger = new RequestLedger<string>();
    expect(ledger.admit(7, 'first')).toBeUndefined();
    expect(await errorOf(ledger.admit(7, 'second'))).toEqual({ status: 400, id: null, code: -32600 });
    expect(ledger.get(7)).toBe('first');
    expect(ledger.release(7)).toBe(true);
    expect(ledger.admit(7, 'again')).toBeUndefined();
  });

  it('keeps a numeric id and the same digits as a string apart', () => {
    const ledger = new RequestLedger<number>();
    expect(ledger.admit(1, 1)).toBeUndefined();
    expect(ledger.admit('1', 2)).toBeUndefined();
    expect([ledger.get(1), ledger.get('1')]).toEqual([1, 2]);
  });

  it('refuses past its bound with 429 under the request id, and admits once one is answered', async () => {
    const ledger = new RequestLedger<true>(2);
    expect(ledger.admit('a', true)).toBeUndefined();
    expect(ledger.admit('b', true)).toBeUndefined();
    expect(await errorOf(ledger.admit('c', true))).toEqual({ status: 429, id: 'c', code: -32600 });
    ledger.release('a');
    expect(ledger.admit('c', true)).toBeUndefined();
    expect(ledger.size).toBe(2);
  });

  it('releases an id for a given entry only while that entry holds it', () => {
    const ledger = new RequestLedger<object>();
    const old = {};
    const current = {};
    ledger.admit(3, old);
    ledger.release(3);
    ledger.admit(3, current);
    expect(ledger.release(3, old)).toBe(false);
    expect(ledger.get(3)).toBe(current);
    expect(ledger.release(3, current)).toBe(true);
  });

  it.each([
    [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4 } }, 4],
    [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } }, 'x'],
    [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: null } }, undefined],
    [{ jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 4 } }, undefined],
    [undefined, undefined],
  ])('reads the cancelled id of %j as %j', (message, expected) => {
    expect(cancelledRequestId(message)).toBe(expected);
  });
});

describe('the HTTP+SSE wire keeps the session’s in-flight ids', () => {
  const TOKEN = 't';
  const url = `http://127.0.0.1/mcp/messages?sessionId=${TOKEN}`;
  const post = (body: unknown) => new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });

  async function opened() {
    const transport = new SseSessionTransport({
      hooks: { sessionId: 's', onSessionInitialized: () => undefined, onSessionClosed: () => undefined },
      token: TOKEN,
      endpoint: `/mcp/messages?sessionId=${TOKEN}`,
      onClosed: () => undefined,
    });
    transport.onmessage = () => undefined;
    const stream = transport.open();
    void stream.body!.pipeTo(new WritableStream());
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
    expect((await transport.handleRequest(post(init), init)).status).toBe(202);
    await transport.send({ jsonrpc: '2.0', id: 0, result: {} } as JSONRPCMessage);
    return transport;
  }

  it('refuses a second request under an open id, and takes it again once its response went on the stream', async () => {
    const transport = await opened();
    expect((await transport.handleRequest(post(call(5)), call(5))).status).toBe(202);
    expect(await errorOf(await transport.handleRequest(post(call(5)), call(5)))).toEqual({ status: 400, id: null, code: -32600 });
    await transport.send({ jsonrpc: '2.0', id: 5, result: {} } as JSONRPCMessage);
    expect((await transport.handleRequest(post(call(5)), call(5))).status).toBe(202);
    await transport.close();
  });

  it('frees the id of a request the client cancelled', async () => {
    const transport = await opened();
    expect((await transport.handleRequest(post(call(6)), call(6))).status).toBe(202);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6, reason: 'test' } };
    expect((await transport.handleRequest(post(cancel), cancel)).status).toBe(202);
    expect((await transport.handleRequest(post(call(6)), call(6))).status).toBe(202);
    await transport.close();
  });
});
