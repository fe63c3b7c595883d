/**
 * The wire of one HTTP+SSE session on its own, without sockets: what it answers a POST, what it
 * writes to its stream, and the bound on what a client that never reads may pile up there.
 */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_UNREAD_BYTES, SseSessionTransport } from '../../src/inbound/legacy-sse/sse-session-transport.js';

const TOKEN = 'token-1';
const ENDPOINT = `/mcp/messages?sessionId=${TOKEN}`;

function wire() {
  const seen = { initialized: 0, closedBySession: 0, onClosed: 0, messages: [] as JSONRPCMessage[] };
  const transport = new SseSessionTransport({
    hooks: {
      sessionId: 'session-1',
      onSessionInitialized: () => void seen.initialized++,
      onSessionClosed: () => void seen.closedBySession++,
    },
    token: TOKEN,
    endpoint: ENDPOINT,
    onClosed: () => void seen.onClosed++,
  });
  transport.onmessage = (message) => void seen.messages.push(message);
  return { transport, seen };
}

const post = (body: unknown, url = `http://127.0.0.1${ENDPOINT}`) =>
  new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

async function readText(stream: ReadableStream<Uint8Array>, until: string): Promise<string> {
  const reader = stream.getReader();
  let text = '';
  while (!text.includes(until)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text;
}

describe('SseSessionTransport', () => {
  it('opens its stream with the endpoint event, then writes every message as a message event', async () => {
    const { transport } = wire();
    const response = transport.open();
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 1 } });
    const text = await readText(response.body!, 'notifications/message');
    expect(text).toBe(
      `event: endpoint\ndata: ${ENDPOINT}\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n\n`,
    );
    await transport.close();
  });

  it('answers a POST 202 and hands the message on; refuses what comes before initialize', async () => {
    const { transport, seen } = wire();
    transport.open();
    expect((await transport.handleRequest(post({ jsonrpc: '2.0', id: 0, method: 'ping' }), { jsonrpc: '2.0', id: 0, method: 'ping' })).status).toBe(400);
    expect(seen.messages).toEqual([]);
    expect(transport.openStreams).toBe(0);
    expect((await transport.handleRequest(post(initialize), initialize)).status).toBe(202);
    expect(seen.initialized).toBe(1);
    expect(seen.messages).toEqual([initialize]);
    expect(transport.openStreams).toBe(1);
    await transport.close();
  });

  it('finds nothing for a request without its token: a Streamable HTTP request naming its session id', async () => {
    const { transport, seen } = wire();
    transport.open();
    for (const request of [post(initialize, 'http://127.0.0.1/mcp'), post(initialize, 'http://127.0.0.1/mcp/messages?sessionId=other'), new Request('http://127.0.0.1/mcp', { method: 'GET' })]) {
      expect((await transport.handleRequest(request, initialize)).status).toBe(404);
    }
    expect(seen.messages).toEqual([]);
    await transport.close();
  });

  it('closes once, however often it is closed, and refuses to send afterwards', async () => {
    const { transport, seen } = wire();
    transport.open();
    await transport.close();
    await transport.close();
    expect(seen.onClosed).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', method: 'notifications/message' })).rejects.toThrow('closed');
  });

  it('tells the session when the client goes', async () => {
    const { transport, seen } = wire();
    const response = transport.open();
    await response.body!.cancel();
    expect(seen.closedBySession).toBe(1);
  });

  it('cuts a stream whose client does not read once more than the unread bound waits, and tells the session', async () => {
    const { transport, seen } = wire();
    const response = transport.open();
    // The HTTP server took a reader (the client connected) but the client reads nothing.
    const reader = response.body!.getReader();
    const big = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(1024 * 1024) } };
    let sent = 0;
    while (seen.closedBySession === 0 && sent < 100) {
      await transport.send(big);
      sent++;
    }
    expect(seen.closedBySession).toBe(1);
    const eventBytes = Buffer.byteLength(`event: message\ndata: ${JSON.stringify(big)}\n\n`);
    const endpointBytes = Buffer.byteLength(`event: endpoint\ndata: ${ENDPOINT}\n\n`);
    // The first send that takes the unread bytes past the bound is the last one.
    expect(sent).toBe(Math.floor((MAX_UNREAD_BYTES - endpointBytes) / eventBytes) + 1);
    await expect(reader.read()).rejects.toThrow('aborted');
    await expect(transport.send(big)).rejects.toThrow('closed');
  });
});
