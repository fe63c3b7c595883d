/**
 * The HTTP+SSE connector against hostile and broken upstreams. NETWORK SAFETY: every listener
 * binds 127.0.0.1; names are mapped by an injected resolver (no DNS); the tripwire fails a test
 * on any attempt to dial anything but a loopback literal. What is proved: the announced message
 * endpoint must be of the SSE URL's origin (else nothing is POSTed, and the error names the
 * server, never a URL); the egress guard decides every connection (private networks blocked
 * without `allowPrivateNetwork`); no SSE event may exceed the per-message cap; an upstream that
 * never announces an endpoint, or answers with something else than a stream, is refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets } from '../../src/config/secrets.js';
import type { SseServerConfig } from '../../src/config/schema.js';
import { UpstreamError, UpstreamHttpError } from '../../src/errors.js';
import { startGateway } from '../../src/gateway.js';
import { createEgressDispatcher, type Resolve } from '../../src/net/egress-guard.js';
import { silentLogger } from '../../src/observability/logger.js';
import { DEFAULT_BODY_LIMITS } from '../../src/net/bounded-body.js';
import { createSseTransport, SseClientTransport } from '../../src/upstream/sse.js';
import { createUpstreamFetch, type HttpConnectorDeps } from '../../src/upstream/streamable-http.js';
import { startSseFixture } from '../fixtures/sse-fixture.js';
import { errorOf, waitUntil } from '../integration/harness.js';
import { tripwireEachTest } from '../net/tripwire.js';

const cleanups: (() => Promise<void> | void)[] = [];
tripwireEachTest(cleanups);

interface Listener {
  readonly origin: string;
  readonly connections: () => number;
  /** Requests seen, as `METHOD path`. */
  readonly requests: string[];
  /** Closed connections (the client hung up or was cut). */
  readonly closed: () => number;
}

async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Listener> {
  let connections = 0;
  let closed = 0;
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  server.on('connection', (socket) => {
    connections++;
    socket.on('close', () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${port}`, connections: () => connections, requests, closed: () => closed };
}

/** An SSE answer whose first event is `endpoint` with `data`, then silence. */
function announcing(data: string) {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`event: endpoint\ndata: ${data}\n\n`);
  };
}

function config(url: string, extra: Partial<SseServerConfig> = {}): SseServerConfig {
  return {
    transport: 'sse',
    url,
    headers: {},
    envHeaders: {},
    allowPrivateNetwork: true,
    connectTimeoutMs: 2_000,
    mode: 'required',
    isolation: 'session',
    enabledTools: [],
    disabledTools: [],
    requestTimeoutMs: 10_000,
    ...extra,
  };
}

function deps(resolve?: Resolve): HttpConnectorDeps {
  return {
    readEnv: () => undefined,
    dispatcherFor: (server, entry) =>
      createEgressDispatcher({ server, allowPrivateNetwork: entry.allowPrivateNetwork, connectTimeoutMs: entry.connectTimeoutMs, ...(resolve ? { resolve } : {}) }),
  };
}

/** Log lines written at warn and above, as text. */
function capturingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join('') };
}

describe('the announced message endpoint', () => {
  it('is refused when it is of another origin: nothing is POSTed there, and the error names the server only', async () => {
    const decoy = await listen((_req, res) => res.end());
    const upstream = await listen(announcing(`${decoy.origin}/messages?sessionId=abc`));
    const log = capturingLogger();
    const transport = createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), log.logger);
    const error = await errorOf(transport.start());
    expect(error.message).toBe('upstream "legacy": SSE stream announced a message endpoint of another origin (refused)');
    expect(decoy.connections()).toBe(0);
    expect(log.text()).toContain('another origin');
    for (const text of [error.message, log.text()]) {
      expect(text).not.toContain(decoy.origin.slice('http://'.length));
      expect(text).not.toContain(upstream.origin.slice('http://'.length));
    }
  });

  it('is refused when it carries credentials, even on the same origin', async () => {
    const upstream = await listen((req, res) => announcing(`http://user:pw@${req.headers.host}/messages`)(req, res));
    const error = await errorOf(createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), silentLogger()).start());
    expect(error.message).toContain('another origin (refused)');
  });

  it('makes a gateway with that server required refuse to start, naming the server and no URL', async () => {
    const decoy = await listen((_req, res) => res.end());
    const upstream = await listen(announcing(`${decoy.origin}/messages`));
    const error = await errorOf(
      startGateway({
        config: parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: { legacy: config(`${upstream.origin}/sse`) } }),
        logger: silentLogger(),
        env: {},
      }),
    );
    expect(error.message).toContain('legacy');
    expect(error.message).not.toContain('127.0.0.1');
    expect(decoy.connections()).toBe(0);
  });

  it('resolves relative to the SSE URL, as the 2024-11-05 spec allows', async () => {
    const upstream = await listen((req, res) => {
      if (req.method === 'GET') announcing('messages?sessionId=rel')(req, res);
      else res.writeHead(202).end();
    });
    const transport = new SseClientTransport({
      server: 'legacy',
      url: new URL(`${upstream.origin}/base/sse`),
      fetch: createUpstreamFetch('legacy', config(`${upstream.origin}/base/sse`), deps(), silentLogger()),
      connectTimeoutMs: 2_000,
      logger: silentLogger(),
    });
    cleanups.push(() => transport.close());
    await transport.start();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(upstream.requests).toEqual(['GET /base/sse', 'POST /base/messages?sessionId=rel']);
  });
});

describe('the stream, however the upstream frames and chunks it', () => {
  // WHATWG HTML, "Server-sent events" (§9.2.6): CRLF, LF and CR line ends, comments, a leading
  // BOM, one leading space dropped, data lines joined with LF, an unnamed event is a message.
  const stream =
    '\ufeff: hello\r\nevent: endpoint\r\ndata: /messages?sessionId=s1\r\n\r\n' +
    'event: message\rdata: {"jsonrpc":"2.0","method":"notifications/message",\rdata: "params":{"level":"info","data":"héllo ☃"}}\r\r' +
    'id: 7\nretry: 10\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"second"}}\n\n' +
    'event: other\ndata: {"jsonrpc":"2.0","method":"ignored"}\n\n';

  it.each([
    ['in one piece', [Buffer.from(stream)]],
    ['one byte at a time (multi-byte characters and CRLF split)', [...Buffer.from(stream)].map((byte) => Buffer.of(byte))],
  ])('reads the endpoint and every message %s', async (_label, chunks) => {
    const upstream = await listen((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = (at: number): void => {
        if (at === chunks.length || res.destroyed) return;
        res.write(chunks[at], () => write(at + 1));
      };
      write(0);
    });
    const transport = createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), silentLogger());
    cleanups.push(() => transport.close());
    const messages: unknown[] = [];
    transport.onmessage = (message) => messages.push(message);
    await transport.start();
    await waitUntil(() => messages.length === 2, 'both messages');
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'héllo ☃' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'second' } },
    ]);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(upstream.requests).toEqual(['GET /sse', 'POST /messages?sessionId=s1']);
  });
});

describe('what an sse upstream is sent', () => {
  it('carries the configured headers and envHeaders on the stream and on every POST', async () => {
    const seen: Array<{ method: string; team: unknown; authorization: unknown }> = [];
    const upstream = await listen((req, res) => {
      seen.push({ method: req.method ?? '', team: req.headers['x-team'], authorization: req.headers.authorization });
      if (req.method === 'GET') announcing('/messages')(req, res);
      else res.writeHead(202).end();
    });
    const entry = config(`${upstream.origin}/sse`, { headers: { 'X-Team': 'core' }, envHeaders: { Authorization: 'SSE_UPSTREAM_TOKEN' } });
    const transport = createSseTransport(
      'legacy',
      entry,
      { ...deps(), readEnv: (name) => (name === 'SSE_UPSTREAM_TOKEN' ? 'Bearer upstream-token' : undefined) },
      silentLogger(),
    );
    cleanups.push(() => transport.close());
    await transport.start();
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(seen).toEqual([
      { method: 'GET', team: 'core', authorization: 'Bearer upstream-token' },
      { method: 'POST', team: 'core', authorization: 'Bearer upstream-token' },
    ]);
  });

  it('counts its header values among the secrets the logs mask', () => {
    const parsed = parseConfig({ servers: { old: { transport: 'sse', url: 'https://mcp.example.com/sse', headers: { 'X-Api-Key': 'sse-header-secret' } } } });
    expect(configSecrets(parsed, {})).toContain('sse-header-secret');
  });
});

describe('the egress guard on sse upstreams', () => {
  it('blocks a loopback SSE URL without allowPrivateNetwork before any connection', async () => {
    const fixture = await startSseFixture();
    cleanups.push(() => fixture.close());
    const transport = createSseTransport('legacy', config(fixture.url, { allowPrivateNetwork: false }), deps(), silentLogger());
    const error = await errorOf(transport.start());
    expect(error.message).toContain('upstream "legacy"');
    expect(error.message).toContain('loopback');
    expect(fixture.opened()).toBe(0);
  });

  it('blocks a name that resolves to a private address, asking the injected resolver and dialling nothing', async () => {
    const asked: string[] = [];
    const resolve: Resolve = async (hostname) => {
      asked.push(hostname);
      return [{ address: '10.20.30.40', family: 4 }];
    };
    const transport = createSseTransport('legacy', config('https://mcp.internal.example/sse', { allowPrivateNetwork: false }), deps(resolve), silentLogger());
    const error = await errorOf(transport.start());
    expect(error.message).toMatch(/^upstream "legacy": connection to a private address refused/);
    expect(asked).toEqual(['mcp.internal.example']);
  });
});

describe('a hostile or broken sse upstream', () => {
  it('has its stream closed when one event exceeds the per-message cap', async () => {
    const upstream = await listen((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: endpoint\ndata: /messages\n\n`);
      // One endless `data:` line, written until the gateway hangs up.
      const chunk = `data: ${'x'.repeat(16 * 1024)}`;
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      req.socket.on('close', () => res.destroy());
    });
    const cap = 256 * 1024;
    const transport = new SseClientTransport({
      server: 'legacy',
      url: new URL(`${upstream.origin}/sse`),
      fetch: createUpstreamFetch('legacy', config(`${upstream.origin}/sse`), { ...deps(), maxMessageBytes: cap }, silentLogger()),
      connectTimeoutMs: 2_000,
      logger: silentLogger(),
    });
    const errors: Error[] = [];
    let closed = false;
    transport.onerror = (error) => errors.push(error);
    transport.onclose = () => (closed = true);
    await transport.start();
    await waitUntil(() => closed, 'the transport to close');
    expect(errors.map((e) => (e as { code?: string }).code)).toContain('UPSTREAM_MESSAGE_TOO_LARGE');
    await waitUntil(() => upstream.closed() === upstream.connections(), 'the upstream connection to be closed');
  });

  it('caps a message at 16 MiB by default', () => {
    expect(DEFAULT_BODY_LIMITS.maxMessageBytes).toBe(16 * 1024 * 1024);
  });

  it('is refused when it never announces an endpoint, within connectTimeoutMs', async () => {
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': nothing to say\n\n');
    });
    const transport = createSseTransport('legacy', config(`${upstream.origin}/sse`, { connectTimeoutMs: 300 }), deps(), silentLogger());
    const error = await errorOf(transport.start());
    expect(error.message).toBe('upstream "legacy": SSE stream announced no message endpoint in time');
    await waitUntil(() => upstream.closed() === upstream.connections(), 'the upstream connection to be closed');
  });

  it.each([
    ['a JSON answer', (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 'did not answer with an event stream'],
    ['a 404', (res: http.ServerResponse) => res.writeHead(404).end('no'), 'answered HTTP 404'],
    ['an empty stream', (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(), 'ended before announcing'],
  ])('is refused when the SSE URL gives %s', async (_label, answer, expected) => {
    const upstream = await listen((_req, res) => answer(res));
    const error = await errorOf(createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), silentLogger()).start());
    expect(error.message).toContain(expected);
    expect(error.message).toMatch(/^upstream "legacy": /);
  });

  it('reports a refused POST by status only, never the body the upstream sent back', async () => {
    const upstream = await listen((req, res) => {
      if (req.method === 'GET') announcing('/messages')(req, res);
      else res.writeHead(500, { 'content-type': 'text/plain' }).end('stack trace with secrets');
    });
    const transport = createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), silentLogger());
    cleanups.push(() => transport.close());
    await transport.start();
    const error = await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }).then(
      () => undefined,
      (refused: unknown) => refused,
    );
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: 500, message: 'upstream "legacy": answered HTTP 500' });
  });

  it('drops a message that is not JSON-RPC and keeps the stream', async () => {
    let stream: http.ServerResponse | undefined;
    const upstream = await listen((req, res) => {
      stream = res;
      announcing('/messages')(req, res);
    });
    const transport = createSseTransport('legacy', config(`${upstream.origin}/sse`), deps(), silentLogger());
    cleanups.push(() => transport.close());
    const errors: Error[] = [];
    const messages: unknown[] = [];
    transport.onerror = (error) => errors.push(error);
    transport.onmessage = (message) => messages.push(message);
    await transport.start();
    stream!.write('event: message\ndata: {"not":"json-rpc"}\n\n');
    stream!.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n\n');
    await waitUntil(() => messages.length === 1, 'the valid message');
    expect(errors.map((e) => e.message)).toEqual(['upstream "legacy": sent an SSE message that is not JSON-RPC']);
    expect(errors[0]).toBeInstanceOf(UpstreamError);
  });
});
