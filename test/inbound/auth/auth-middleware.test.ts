import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { serve, type ServerType } from '@hono/node-server';
import { authConfigSchema } from '../../../src/config/auth-schema.js';
import { compileAuthenticator } from '../../../src/inbound/auth/authenticate.js';
import { authMiddleware, principalOf, stripAuthorization } from '../../../src/inbound/auth/auth-middleware.js';
import { captureLog, leaks } from './capture-log.js';
import { SubjectTokens } from '../../../src/upstream/credentials/subject-tokens.js';

const TOKEN = 'mw-token-0123456789abcdefghijklmnop';
const log = captureLog();
const authenticator = compileAuthenticator(
  authConfigSchema.parse({ kind: 'bearer', tokens: [{ principal: 'carol', env: 'CAROL_TOKEN' }] }),
  { readEnv: (name) => (name === 'CAROL_TOKEN' ? TOKEN : undefined), logger: log.logger },
);

interface Seen {
  principal: string | undefined;
  /** Authorization as the downstream code sees it after `stripAuthorization`. */
  downstreamAuthorization: string | null;
  downstreamBody: string;
}

function app(seen: Seen[]): Hono {
  const hono = new Hono();
  hono.use('*', authMiddleware(authenticator));
  hono.all('*', async (c) => {
    const downstream = stripAuthorization(c.req.raw);
    seen.push({
      principal: principalOf(c),
      downstreamAuthorization: downstream.headers.get('authorization'),
      downstreamBody: downstream.method === 'POST' ? await downstream.text() : '',
    });
    return c.text(`hello ${c.get('principal')}`);
  });
  return hono;
}

/** A 401 (400 with `code: INVALID_REQUEST` for malformed Bearer credentials, RFC 6750 §3.1) carrying `challenge`. */
async function expectRefusal(response: Response, challenge: string): Promise<void> {
  const malformed = challenge.includes('invalid_request');
  expect(response.status).toBe(malformed ? 400 : 401);
  expect(response.headers.get('www-authenticate')).toBe(challenge);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const text = await response.text();
  const code = malformed ? 'INVALID_REQUEST' : 'UNAUTHENTICATED';
  expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String), data: { code } } });
  expect(leaks([text], [TOKEN])).toBeUndefined();
}

describe('authMiddleware through app.request()', () => {
  it('lets a valid token through, sets the principal, and hides Authorization from downstream', async () => {
    const seen: Seen[] = [];
    const response = await app(seen).request('/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hello carol');
    expect(seen).toEqual([{ principal: 'carol', downstreamAuthorization: null, downstreamBody: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }]);
  });

  const refusals: readonly (readonly [string, Record<string, string>, string])[] = [
    ['no Authorization', {}, 'Bearer realm="portcullis"'],
    ['another scheme', { authorization: 'Basic Y2Fyb2w6eA==' }, 'Bearer realm="portcullis"'],
    ['a wrong token', { authorization: 'Bearer wrong-token-of-some-length' }, 'Bearer realm="portcullis", error="invalid_token"'],
    ['malformed Bearer credentials', { authorization: `Bearer ${TOKEN} extra` }, 'Bearer realm="portcullis", error="invalid_request"'],
  ];

  it.each(refusals)('answers %s with 401 (400 when malformed) and never reaches the route', async (_name, headers, challenge) => {
    const seen: Seen[] = [];
    await expectRefusal(await app(seen).request('/mcp', { headers }), challenge);
    expect(seen).toEqual([]);
  });
});

describe('authMiddleware under @hono/node-server', () => {
  let server: ServerType;
  let port: number;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = serve({ fetch: app(seen).fetch, hostname: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** One request written by hand, so header lines can repeat exactly as a client sent them. */
  async function raw(headerLines: readonly string[], body = ''): Promise<{ status: number; head: string; body: string }> {
    const socket = connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    const head = ['POST /mcp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, ...headerLines];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'close');
    const text = Buffer.concat(chunks).toString('utf8');
    const [responseHead = '', responseBody = ''] = text.split('\r\n\r\n');
    return { status: Number(responseHead.split(' ')[1]), head: responseHead, body: responseBody };
  }

  it('authenticates a real request and passes the body on without Authorization', async () => {
    seen.length = 0;
    const response = await raw([`Authorization: Bearer ${TOKEN}`, 'Content-Type: application/json'], '{"a":1}');
    expect(response.status).toBe(200);
    expect(seen).toEqual([{ principal: 'carol', downstreamAuthorization: null, downstreamBody: '{"a":1}' }]);
  });

  it('refuses a duplicated Authorization header even when both lines carry the right token', async () => {
    seen.length = 0;
    const response = await raw([`Authorization: Bearer ${TOKEN}`, `authorization: Bearer ${TOKEN}`]);
    expect(response.status).toBe(400);
    expect(response.head.toLowerCase()).toContain('www-authenticate: bearer realm="portcullis", error="invalid_request"');
    expect(JSON.parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'repeated Authorization header refused', data: { code: 'INVALID_REQUEST' } },
    });
    expect(leaks([response.head, response.body], [TOKEN])).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it('never logs the token', () => {
    expect(leaks(log.lines, [TOKEN])).toBeUndefined();
  });
});

describe('stripAuthorization', () => {
  it('returns a copy without Authorization, keeping method, URL, other headers and body', async () => {
    const original = new Request('http://127.0.0.1/mcp?x=1', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'abc', 'content-type': 'application/json' },
      body: '{"b":2}',
    });
    const stripped = stripAuthorization(original);
    expect(stripped).not.toBe(original);
    expect(stripped.headers.get('authorization')).toBeNull();
    expect(stripped.headers.get('mcp-session-id')).toBe('abc');
    expect(stripped.method).toBe('POST');
    expect(stripped.url).toBe('http://127.0.0.1/mcp?x=1');
    expect(await stripped.text()).toBe('{"b":2}');
    expect(original.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
  });

  it('returns the request itself when there is nothing to strip', () => {
    const request = new Request('http://127.0.0.1/mcp');
    expect(stripAuthorization(request)).toBe(request);
    expect(stripAuthorization(request, true)).toBe(request);
  });

  it('with the body read elsewhere, copies no body and lends the original signal, leaving the original body unread', async () => {
    const original = new Request('http://127.0.0.1/mcp?x=1', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'abc', 'content-type': 'application/json' },
      body: '{"b":2}',
    });
    const stripped = stripAuthorization(original, true);
    expect(stripped).not.toBe(original);
    expect(stripped.headers.get('authorization')).toBeNull();
    expect([...stripped.headers.keys()]).toEqual(['content-type', 'mcp-session-id']);
    expect(stripped.method).toBe('POST');
    expect(stripped.url).toBe('http://127.0.0.1/mcp?x=1');
    expect(stripped.body).toBeNull();
    expect(stripped.signal).toBe(original.signal);
    expect(original.bodyUsed).toBe(false);
    expect(await original.text()).toBe('{"b":2}');
  });
});

describe('withVerifiedToken (the subject tokens of tokenExchange)', () => {
  it('is never told a shared bearer secret, nor a token that was refused', async () => {
    const told: Array<string | undefined> = [];
    const hono = new Hono();
    hono.use(
      '*',
      authMiddleware(authenticator, {
        withVerifiedToken: (_principal, token, _claims, next) => {
          told.push(token);
          return next();
        },
      }),
    );
    hono.all('*', (c) => c.text(`hello ${c.get('principal')}`));
    expect((await hono.request('/mcp', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await hono.request('/mcp', { headers: { authorization: 'Bearer not-the-token-0123456789' } })).status).toBe(401);
    // A bearer secret is no JWT the authorization server could exchange (no claims): never kept.
    expect(told).toEqual([]);
  });

  it("runs a request a peer replica forwarded with no subject: never another of the principal's tokens", async () => {
    const subjects = new SubjectTokens();
    // The principal's latest token on this replica, from a request it authenticated earlier.
    subjects.run('p', 'earlier-token-of-p', { exp: Date.now() / 1000 + 3_600 }, () => undefined);
    const hono = new Hono();
    hono.use(
      '*',
      authMiddleware(authenticator, {
        forwarded: (request) => (request.headers.has('x-test-forwarded') ? { ok: true, principal: 'p' } : undefined),
        withVerifiedToken: (principal, token, claims, next) => subjects.run(principal, token, claims, next),
      }),
    );
    hono.all('*', (c) => c.text(subjects.current('p')?.token ?? 'none'));
    expect(await (await hono.request('/mcp', { headers: { 'x-test-forwarded': '1' } })).text()).toBe('none');
    // Outside any request (a connection's own stream), the latest is still there.
    expect(subjects.current('p')?.token).toBe('earlier-token-of-p');
  });
});
