/**
 * A POST body read straight from the Node request (no WHATWG stream), over real sockets on
 * 127.0.0.1: the same limits and outcomes as the Fetch reader, bytes never taken from the
 * `Request` handed along, 413 without waiting for the rest, 400 when the client hangs up.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { serve as serveHono, type ServerType } from '@hono/node-server';
import { httpStatusFor, toJsonRpcError } from '../../src/errors.js';
import { readJsonRpcBody as readBody, type BodyLimits } from '../../src/inbound/body.js';
import { incomingBodyOf } from '../../src/inbound/incoming-body.js';

/** A body check's outcome as the client sees it: the HTTP status and JSON-RPC error of a refusal. */
type BodyResult = { ok: true; value: unknown } | { ok: false; status: number; rpcCode: number; message: string };

async function readJsonRpcBody(...args: Parameters<typeof readBody>): Promise<BodyResult> {
  const result = await readBody(...args);
  if (result.ok) return result;
  return { ok: false, status: httpStatusFor(result.error), rpcCode: toJsonRpcError(result.error).code, message: result.error.message };
}

const LIMITS: BodyLimits = { maxBytes: 64 * 1024, maxDepth: 8 };

/** A Request with the Node request's headers whose own body fails if anything reads it. */
function requestWithoutBody(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
  const poisoned = new ReadableStream<Uint8Array>({
    pull() {
      throw new Error('the Fetch body was read');
    },
  });
  return new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: poisoned, duplex: 'half' } as RequestInit);
}

interface Outcome {
  result: BodyResult;
  /** Whether the request had been read to its end when the result came back. */
  ended: boolean;
  paused: boolean;
}

let server: Server;
let port: number;
let hono: ServerType | undefined;
const waiting: Array<(outcome: Outcome) => void> = [];
const arrived: Outcome[] = [];

/** The outcome of the next request the server reads (in arrival order). */
function nextOutcome(): Promise<Outcome> {
  const ready = arrived.shift();
  return ready !== undefined ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
}

beforeAll(async () => {
  server = createServer((incoming, response) => {
    void readJsonRpcBody(requestWithoutBody(incoming), LIMITS, incoming).then((result) => {
      const outcome = { result, ended: incoming.readableEnded, paused: incoming.isPaused() };
      const waiter = waiting.shift();
      if (waiter !== undefined) waiter(outcome);
      else arrived.push(outcome);
      if (!response.destroyed) response.end(JSON.stringify(result));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const listening of [server, hono]) {
    if (listening === undefined) continue;
    (listening as Server).closeAllConnections();
    await new Promise<void>((resolve) => listening.close(() => resolve()));
  }
});

/** Opens a socket and writes `head` (request line and headers) and `parts` of the body. */
async function send(head: string[], parts: Array<string | Buffer> = [], end = true) {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(`${['POST /mcp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Connection: close', ...head].join('\r\n')}\r\n\r\n`);
  for (const part of parts) socket.write(part);
  if (end) socket.end();
  return socket;
}

const JSON_TYPE = 'Content-Type: application/json';

/** Reads `body` through the Fetch reader, the way tests and `app.request()` reach it. */
function viaFetch(body: string, contentType = 'application/json'): Promise<BodyResult> {
  return readJsonRpcBody(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': contentType }, body }), LIMITS);
}

describe('reading the body from the Node request', () => {
  const bodies: ReadonlyArray<readonly [string, string]> = [
    ['a JSON-RPC request', '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
    ['non-ASCII text', '{"jsonrpc":"2.0","id":"é✓","method":"tools/call","params":{"text":"日本語"}}'],
    ['a leading byte-order mark', '\uFEFF{"jsonrpc":"2.0","id":2,"method":"ping"}'],
    ['JSON nested too deep', `${'['.repeat(9)}${']'.repeat(9)}`],
    ['invalid JSON', '{"jsonrpc":'],
    ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'],
    ['a scalar', '42'],
    ['an empty body', ''],
  ];

  it.each(bodies)('judges %s exactly as the Fetch reader does', async (_name, body) => {
    const bytes = Buffer.from(body);
    await send([JSON_TYPE, `Content-Length: ${bytes.length}`], [bytes]);
    const { result } = await nextOutcome();
    expect(result).toEqual(await viaFetch(body));
  });

  it('assembles a chunked body sent in many pieces, split inside multi-byte characters', async () => {
    const message = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { text: 'ü€'.repeat(5_000) } };
    const bytes = Buffer.from(JSON.stringify(message));
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 1_001) {
      const piece = bytes.subarray(i, i + 1_001);
      pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    await send([JSON_TYPE, 'Transfer-Encoding: chunked'], [...pieces, Buffer.from('0\r\n\r\n')]);
    expect((await nextOutcome()).result).toEqual({ ok: true, value: message });
  });

  it('refuses a wrong content type with 415 before reading', async () => {
    await send(['Content-Type: text/plain', 'Content-Length: 2'], ['{}']);
    const { result, ended } = await nextOutcome();
    expect(result).toEqual(await viaFetch('{}', 'text/plain'));
    expect(result).toMatchObject({ ok: false, status: 415 });
    expect(ended).toBe(false);
  });

  it('answers 413 on a declared length over the limit without waiting for a byte of the body', async () => {
    const socket = await send([JSON_TYPE, `Content-Length: ${LIMITS.maxBytes + 1}`], [], false);
    const { result, ended } = await nextOutcome();
    expect(result).toMatchObject({ ok: false, status: 413 });
    expect(ended).toBe(false);
    socket.destroy();
  });

  it('answers 413 once a chunked body passes the limit, while the client is still sending, and reads no further', async () => {
    const piece = Buffer.alloc(16 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    const socket = await send([JSON_TYPE, 'Transfer-Encoding: chunked'], Array.from({ length: 6 }, () => chunk), false);
    const { result, ended, paused } = await nextOutcome();
    expect(result).toMatchObject({ ok: false, status: 413, message: `Request body exceeds ${LIMITS.maxBytes} bytes` });
    expect(ended).toBe(false);
    expect(paused).toBe(true);
    socket.destroy();
  });

  it('answers 400 when the client hangs up in the middle of the body', async () => {
    // Cut only once the server is reading this request, so the cut lands mid-body.
    const reading = once(server, 'request');
    const socket = await send([JSON_TYPE, 'Content-Length: 100'], ['{"jsonrpc":"2.0",'], false);
    await reading;
    socket.destroy();
    expect((await nextOutcome()).result).toEqual({
      ok: false,
      status: 400,
      rpcCode: -32600,
      message: 'request body could not be read',
    });
  });

  it('answers 400 when the chunked framing breaks mid-body', async () => {
    await send([JSON_TYPE, 'Transfer-Encoding: chunked'], ['5\r\n{"jso\r\nzz\r\n']);
    expect((await nextOutcome()).result).toMatchObject({ ok: false, status: 400, message: 'request body could not be read' });
  });
});

describe('the Request after its body was read from the Node request (@hono/node-server)', () => {
  // The cluster forwarder and the 2026 listen stream read `request.signal` after the body was
  // read: @hono/node-server then builds the full Request over a request already read to its end.
  it('still has a signal, aborted when the client goes away', async () => {
    const aborted = new Promise<string>((resolveAborted) => {
      const app = new Hono();
      app.post('*', async (c) => {
        const incoming = incomingBodyOf(c);
        const result = await readJsonRpcBody(c.req.raw, LIMITS, incoming);
        const signal = c.req.raw.signal;
        signal.addEventListener('abort', () => resolveAborted(JSON.stringify({ direct: incoming !== undefined, result })));
        // An endless SSE response, like a listen stream, until the client leaves.
        return new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode(': open\n\n')) }), {
          headers: { 'content-type': 'text/event-stream' },
        });
      });
      hono = serveHono({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    });
    await once(hono, 'listening');
    const honoPort = (hono.address() as AddressInfo).port;
    const socket = connect({ host: '127.0.0.1', port: honoPort });
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${honoPort}\r\n${JSON_TYPE}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await once(socket, 'data'); // the SSE response began
    socket.destroy();
    expect(JSON.parse(await aborted)).toEqual({ direct: true, result: { ok: true, value: { jsonrpc: '2.0', id: 1, method: 'ping' } } });
  });
});
