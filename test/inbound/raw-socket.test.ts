/**
 * The edge as a raw socket sees it, through the running gateway: requests node:http's client
 * would never send (HTTP/1.0 without Host, two Host lines, an absolute-form target) and clients
 * that trickle their body. Every byte goes to 127.0.0.1 only.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';

let gateway: RunningGateway;
const REQUEST_TIMEOUT_MS = 1_000;

beforeAll(async () => {
  const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: {} });
  gateway = await startGateway({ config, logger: silentLogger(), env: {}, requestTimeoutMs: REQUEST_TIMEOUT_MS });
});
afterAll(() => gateway.close());

/** Sends raw bytes (optionally in timed parts) and resolves with everything the server sent back. */
function exchange(parts: Array<string | { waitMs: number }>, deadlineMs = 8_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gateway.port });
    const received: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer before the deadline'));
    }, deadlineMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(received).toString('utf8'));
    });
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        if (typeof part === 'string') socket.write(part);
        else await new Promise((r) => setTimeout(r, part.waitMs));
      }
      if (!socket.destroyed) socket.end();
    })();
  });
}

const statusOf = (response: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1]);
const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('raw requests at the edge', () => {
  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const response = await exchange(['GET /mcp HTTP/1.0\r\n\r\n']);
    expect(statusOf(response)).toBe(400);
    expect(response).toContain('"jsonrpc":"2.0"');
  });

  it('refuses a request with two Host lines, even when both are allowed names', async () => {
    const response = await exchange([`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`]);
    expect(statusOf(response)).toBe(400);
  });

  it('refuses an absolute-form request line that names another host than the Host header', async () => {
    const response = await exchange([`GET http://evil.example/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
    expect(statusOf(response)).toBeGreaterThanOrEqual(400);
    expect(statusOf(response)).toBeLessThan(500);
  });

  it('cuts a client that trickles its body slower than the request timeout', async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${init.length}\r\n\r\n`;
    const trickle: Array<string | { waitMs: number }> = [head];
    for (const ch of init.slice(0, 20)) trickle.push(ch, { waitMs: 300 });
    const started = Date.now();
    const response = await exchange(trickle);
    expect(statusOf(response)).toBe(408);
    // Cut by the server well before the client would have finished trickling (20 × 300 ms).
    expect(Date.now() - started).toBeLessThan(5_500);
  });

  it('leaves a long-lived SSE stream open well past the request timeout', async () => {
    const opened = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: init,
    });
    const session = opened.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    await opened.body?.cancel();
    const get = `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n`;
    const socket = connect({ host: '127.0.0.1', port: gateway.port });
    let closedAt: number | undefined;
    const started = Date.now();
    let head = '';
    socket.on('data', (chunk) => (head += String(chunk)));
    socket.on('close', () => (closedAt = Date.now()));
    socket.write(get);
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS * 3));
    expect(statusOf(head)).toBe(200);
    expect(closedAt).toBeUndefined();
    socket.destroy();
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS * 3);
  });

  it('still answers a whole request sent in pieces within the timeout', async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: ${init.length}\r\n\r\n`;
    const response = await exchange([head, { waitMs: 100 }, init.slice(0, 40), { waitMs: 100 }, init.slice(40)]);
    expect(statusOf(response)).toBe(200);
    expect(response).toMatch(/mcp-session-id/i);
  });
});
