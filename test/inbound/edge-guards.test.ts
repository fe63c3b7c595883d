import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono, type MiddlewareHandler } from 'hono';
import { serve, type ServerType } from '@hono/node-server';
import { hostGuard, LOGGED_REFUSED_HOSTS, originGuard, type HostGuardOptions, type OriginGuardOptions } from '../../src/inbound/edge-guards.js';
import { createLogger } from '../../src/observability/logger.js';
import { loopbackOrigins } from '../../src/policy/origin-check.js';

interface Guarded {
  app: Hono;
  /** How many requests reached the route behind the guards. */
  reached: () => number;
}

function guardedApp(hosts: HostGuardOptions = {}, origins: OriginGuardOptions = {}): Guarded {
  let count = 0;
  const app = new Hono();
  app.use('*', hostGuard(hosts), originGuard(origins));
  app.all('*', (c) => {
    count += 1;
    return c.text('reached');
  });
  return { app, reached: () => count };
}

async function expectRejection(response: Response, status: number): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body: unknown = await response.json();
  expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String), data: { code: expect.stringMatching(/^(HOST_INVALID|HOST_NOT_ALLOWED|ORIGIN_REFUSED)$/) } } });
}

describe('hostGuard and originGuard through app.request()', () => {
  const vectors: readonly (readonly [string, Record<string, string>, number])[] = [
    ['an allowed Host without Origin', { host: 'localhost:8787' }, 200],
    ['an allowed IPv6 Host', { host: '[::1]:8787' }, 200],
    ['a Host not on the allowlist', { host: 'evil.example.com' }, 403],
    ['a rebinding attempt (bad Host and bad Origin)', { host: 'evil.example.com', origin: 'http://evil.example.com' }, 403],
    ['a malformed Host', { host: 'user@localhost' }, 400],
    ['a bad port', { host: 'localhost:99999' }, 400],
    ['an empty Host', { host: '' }, 400],
    ['no Host at all', {}, 400],
    ['an Origin not on the allowlist', { host: 'localhost', origin: 'http://localhost:8787' }, 403],
    ['a malformed Origin', { host: 'localhost', origin: 'http://localhost:8787/' }, 403],
    ['the opaque Origin', { host: 'localhost', origin: 'null' }, 403],
  ];

  it.each(vectors)('answers %s with %i', async (_name, headers, status) => {
    const { app, reached } = guardedApp();
    const response = await app.request('/mcp', { method: 'POST', headers, body: '{}' });
    if (status === 200) {
      expect(response.status).toBe(200);
      expect(reached()).toBe(1);
    } else {
      await expectRejection(response, status);
      expect(reached()).toBe(0);
    }
  });

  it.each(['GET', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'HEAD'])('guards %s requests', async (method) => {
    const { app, reached } = guardedApp();
    const response = await app.request('/mcp', { method, headers: { host: 'evil.example.com' } });
    expect(response.status).toBe(403);
    expect(reached()).toBe(0);
  });

  it('refuses Host lines joined by the Fetch Headers class', async () => {
    const { app } = guardedApp();
    const headers = new Headers([['host', 'localhost'], ['host', 'localhost']]);
    await expectRejection(await app.request('/mcp', { headers }), 400);
  });

  it('refuses Origin lines joined by the Fetch Headers class', async () => {
    const { app } = guardedApp({}, { allowedOrigins: ['http://localhost:8787'] });
    const headers = new Headers([['host', 'localhost'], ['origin', 'http://localhost:8787'], ['origin', 'http://localhost:8787']]);
    await expectRejection(await app.request('/mcp', { headers }), 403);
  });

  it('admits an allowed Origin and a custom Host', async () => {
    const { app, reached } = guardedApp(
      { allowedHosts: ['mcp.example.com'] },
      { allowedOrigins: ['https://app.example.com'] },
    );
    const response = await app.request('/mcp', { headers: { host: 'MCP.example.com:443', origin: 'https://app.example.com' } });
    expect(response.status).toBe(200);
    expect(reached()).toBe(1);
  });

  it('never echoes an Origin value or a malformed Host in the response', async () => {
    const { app } = guardedApp();
    const cases: Record<string, string>[] = [
      { host: 'secret-7f3a.example/x' },
      { host: 'localhost', origin: 'https://secret-7f3a.example' },
    ];
    for (const headers of cases) {
      const response = await app.request('/mcp', { headers });
      expect(await response.text()).not.toContain('secret-7f3a');
    }
  });

  it('prefers the raw header lines of the Node request when they are present', async () => {
    const { app } = guardedApp();
    const env = { incoming: { rawHeaders: ['Host', 'localhost', 'HOST', 'localhost'], url: '/mcp' } };
    await expectRejection(await app.request('/mcp', { headers: { host: 'localhost' } }, env), 400);
  });

  it('counts the HTTP/2 :authority pseudo-header as a Host line', async () => {
    const { app, reached } = guardedApp();
    const env = { incoming: { rawHeaders: [':authority', 'localhost:8787'], url: '/mcp' } };
    expect((await app.request('/mcp', {}, env)).status).toBe(200);
    const rebinding = { incoming: { rawHeaders: [':authority', 'evil.example.com'], url: '/mcp' } };
    expect((await app.request('/mcp', {}, rebinding)).status).toBe(403);
    expect(reached()).toBe(1);
  });

  it('throws TypeError at construction for a bad allowlist', () => {
    expect(() => hostGuard({ allowedHosts: ['localhost:8787'] })).toThrow(TypeError);
    expect(() => originGuard({ allowedOrigins: ['http://localhost:8787/'] })).toThrow(TypeError);
  });

  it('returns named handlers so stack traces read well', () => {
    // The test transform (esbuild) may suffix a shadowing inner name; the compiled build keeps it.
    expect(hostGuard().name).toMatch(/^hostGuard\d*$/);
    expect(originGuard().name).toMatch(/^originGuard\d*$/);
  });
});

interface RawResponse {
  status: number;
  body: string;
}

/** Send raw bytes to 127.0.0.1 and read one response, framed by its Content-Length. */
async function rawRequest(port: number, request: string): Promise<RawResponse> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.write(request);
  let received = Buffer.alloc(0);
  try {
    for await (const chunk of socket) {
      received = Buffer.concat([received, chunk as Buffer]);
      const text = received.toString('latin1');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd === -1) continue;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? Number.NaN);
      if (Number.isNaN(length) || received.length < headerEnd + 4 + length) continue;
      const status = Number(text.slice(9, 12));
      return { status, body: received.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8') };
    }
    throw new Error('connection closed before a full response arrived');
  } finally {
    socket.destroy();
  }
}

describe('hostGuard and originGuard under @hono/node-server on 127.0.0.1', () => {
  let server: ServerType;
  let port = 0;
  let reachedCount = 0;
  const reached = (): number => reachedCount;
  // The Origin allowlist names the listening port, known only once the server listens.
  let origins: MiddlewareHandler = originGuard();

  beforeAll(async () => {
    const app = new Hono();
    app.use('*', hostGuard(), (c, next) => origins(c, next));
    app.all('*', (c) => {
      reachedCount += 1;
      return c.text('reached');
    });
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    origins = originGuard({ allowedOrigins: loopbackOrigins(port) });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function expectRawRejection(response: RawResponse, status: number): void {
    expect(response.status).toBe(status);
    expect(JSON.parse(response.body)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String), data: { code: expect.any(String) } } });
  }

  function post(headerLines: readonly string[], body = '{}'): string {
    return [
      'POST /mcp HTTP/1.1',
      ...headerLines,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n');
  }

  it('admits a loopback Host and a loopback Origin, as the conformance scenario sends them', async () => {
    const before = reached();
    const response = await rawRequest(port, post([`Host: 127.0.0.1:${port}`, `Origin: http://127.0.0.1:${port}`]));
    expect(response.status).toBe(200);
    expect(reached()).toBe(before + 1);
  });

  it('refuses a rebinding attempt with 403 and a JSON-RPC error', async () => {
    const response = await rawRequest(port, post(['Host: evil.example.com', 'Origin: http://evil.example.com']));
    expectRawRejection(response, 403);
  });

  it('refuses a duplicated Host header that Node itself would collapse to its first line', async () => {
    const response = await rawRequest(port, post(['Host: localhost', 'Host: evil.example.com']));
    expectRawRejection(response, 400);
  });

  it('refuses two identical Host lines', async () => {
    const response = await rawRequest(port, post([`Host: localhost:${port}`, `Host: localhost:${port}`]));
    expectRawRejection(response, 400);
  });

  it('refuses a duplicated Origin header', async () => {
    const origin = `Origin: http://localhost:${port}`;
    const response = await rawRequest(port, post(['Host: localhost', origin, origin]));
    expectRawRejection(response, 403);
  });

  it('refuses an absolute-form request target that names another host', async () => {
    const request = ['GET http://evil.example.com/mcp HTTP/1.1', 'Host: localhost', 'Connection: close', '', ''].join('\r\n');
    const response = await rawRequest(port, request);
    expectRawRejection(response, 400);
    expect(response.body).not.toContain('evil');
  });

  it('answers before reading the body: a rejected request need not send it', async () => {
    const before = reached();
    const request = [
      'POST /mcp HTTP/1.1',
      'Host: evil.example.com',
      'Content-Type: application/json',
      'Content-Length: 10000000',
      '',
      '{"jsonrpc":',
    ].join('\r\n');
    const response = await rawRequest(port, request);
    expectRawRejection(response, 403);
    expect(reached()).toBe(before);
  });
});

describe('a Host not on the allowlist, as the operator and the client see it', () => {
  /** A logger whose lines are kept as parsed records. */
  function capturingLogger() {
    const records: Array<Record<string, unknown>> = [];
    const logger = createLogger({ destination: { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) } });
    return { logger, records };
  }

  it('names the host and allowedHosts in the 403 and logs it once per host', async () => {
    const { logger, records } = capturingLogger();
    const { app } = guardedApp({ logger });
    for (let i = 0; i < 3; i++) {
      const response = await app.request('/mcp', { headers: { host: 'Gateway.Example.com:8787' } });
      expect(response.status).toBe(403);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toBe(`Host header not allowed: "gateway.example.com" is not in the policy's allowedHosts (add it there if clients reach the gateway by this name)`);
    }
    const refusals = records.filter((record) => record.host !== undefined);
    expect(refusals).toEqual([expect.objectContaining({ level: 40, host: 'gateway.example.com', msg: expect.stringContaining('allowedHosts') })]);
  });

  it('never echoes a malformed or overlong Host, and logs at most 32 distinct hosts then one line saying so', async () => {
    const { logger, records } = capturingLogger();
    const { app } = guardedApp({ logger });
    const malformed = await app.request('/mcp', { headers: { host: 'evil<script>' } });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).not.toContain('script');
    const long = `${'a'.repeat(60)}.`.repeat(5) + 'example';
    const overlong = await app.request('/mcp', { headers: { host: long } });
    expect(overlong.status).toBe(403);
    expect(await overlong.text()).not.toContain('aaaa');
    for (let i = 0; i < 100; i++) expect((await app.request('/mcp', { headers: { host: `h${i}.example` } })).status).toBe(403);
    expect(records.filter((record) => record.host !== undefined)).toHaveLength(LOGGED_REFUSED_HOSTS);
    expect(records.filter((record) => record.hosts === LOGGED_REFUSED_HOSTS)).toHaveLength(1);
    expect(records).toHaveLength(LOGGED_REFUSED_HOSTS + 1);
  });
});
