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

/** What the client did before the server answered and closed. */
interface Exchange {
  response: string;
  /** Bytes written before the socket closed. */
  sent: number;
}

/**
 * Sends raw bytes, each part its own write, the next one only once the previous one was handed
 * to the kernel; `trickle` sends one byte per `paceMs` (a slow client, not a wait for the server)
 * until the server closes. Resolves with everything the server sent back.
 */
function exchange(parts: string[], options: { trickle?: string; paceMs?: number } = {}): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gateway.port });
    const received: Buffer[] = [];
    let sent = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('hang guard: no answer within 15 s'));
    }, 15_000);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ response: Buffer.concat(received).toString('utf8'), sent });
    });
    const write = (text: string) =>
      new Promise<void>((done) => {
        if (socket.destroyed) return done();
        socket.write(text, () => {
          sent += Buffer.byteLength(text);
          done();
        });
      });
    void (async () => {
      for (const part of parts) await write(part);
      if (options.trickle === undefined) {
        if (!socket.destroyed) socket.end();
        return;
      }
      for (const ch of options.trickle) {
        if (socket.destroyed) return;
        await write(ch);
        await new Promise((r) => setTimeout(r, options.paceMs ?? 100));
      }
    })();
  });
}

const statusOf = (response: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1]);
const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('raw requests at the edge', () => {
  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const { response } = await exchange(['GET /mcp HTTP/1.0\r\n\r\n']);
    expect(statusOf(response)).toBe(400);
    expect(response).toContain('"jsonrpc":"2.0"');
  });

  it('refuses a request with two Host lines, even when both are allowed names', async () => {
    const { response } = await exchange([`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`]);
    expect(statusOf(response)).toBe(400);
  });

  it('refuses an absolute-form request line that names another host than the Host header', async () => {
    const { response } = await exchange([`GET http://evil.example/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
    expect(statusOf(response)).toBeGreaterThanOrEqual(400);
    expect(statusOf(response)).toBeLessThan(500);
  });

  it('cuts a client that trickles its body slower than the request timeout', async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${init.length}\r\n\r\n`;
    // One byte every 100 ms: the whole body would take longer than the 1 s request timeout, and
    // the client never stops sending, so only the request timeout (not an idle one) can cut it.
    const { response, sent } = await exchange([head], { trickle: init, paceMs: 100 });
    expect(statusOf(response)).toBe(408);
    // Cut by the server while the client was still trickling: the body never arrived whole.
    expect(sent).toBeGreaterThan(head.length);
    expect(sent).toBeLessThan(head.length + init.length);
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
    let closed = false;
    let head = '';
    const headSeen = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        head += String(chunk);
        if (head.includes('\r\n\r\n')) resolve();
      }),
    );
    socket.on('close', () => (closed = true));
    socket.write(get);
    await headSeen;
    expect(statusOf(head)).toBe(200);
    // A request opened after the stream and never finished is cut by the request timeout: by
    // then the stream's own deadline, had it one, has passed too.
    const cut = await exchange([`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`], { trickle: ' '.repeat(99), paceMs: 100 });
    expect(statusOf(cut.response)).toBe(408);
    expect(closed).toBe(false);
    const gone = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.destroy();
    await gone;
  });

  it('still answers a whole request sent in pieces within the timeout', async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: ${init.length}\r\n\r\n`;
    const { response } = await exchange([head, init.slice(0, 40), init.slice(40)]);
    expect(statusOf(response)).toBe(200);
    expect(response).toMatch(/mcp-session-id/i);
  });
});
