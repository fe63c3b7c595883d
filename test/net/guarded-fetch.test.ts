// The WHATWG `Response` the guarded fetch builds from `Dispatcher.request()` (src/net/dispatch-hop.ts):
// what the SDK client transport reads must match what undici's fetch gave. NETWORK SAFETY: every
// listener binds 127.0.0.1; the tripwire fails a test on any dial of a non-loopback address.
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { createEgressDispatcher } from '../../src/net/egress-guard.js';
import { createGuardedFetch } from '../../src/net/guarded-fetch.js';
import { tripwireEachTest } from './tripwire.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

const cleanups: (() => Promise<void> | void)[] = [];
tripwireEachTest(cleanups);

async function listen(handler: Handler): Promise<{ origin: string; seen: http.IncomingHttpHeaders[] }> {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(req.headers);
      handler(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The handler's methods bound to it, so a wrapper can replace one and delegate the rest. */
function bound(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
  const methods = ['onRequestStart', 'onRequestUpgrade', 'onResponseStart', 'onResponseData', 'onResponseEnd', 'onResponseError'] as const;
  const out: Record<string, unknown> = {};
  for (const name of methods) {
    const method = handler[name] as ((...args: unknown[]) => unknown) | undefined;
    if (method !== undefined) out[name] = method.bind(handler);
  }
  return out as Dispatcher.DispatchHandler;
}

function guardedFetch(dispatcher?: Dispatcher) {
  const egress = dispatcher ?? createEgressDispatcher({ server: 'docs', allowPrivateNetwork: true, connectTimeoutMs: 5_000 });
  cleanups.push(() => egress.destroy());
  return createGuardedFetch({ server: 'docs', dispatcher: egress });
}

describe('createGuardedFetch responses', () => {
  it('answers with the status, status text, headers and body of the upstream', async () => {
    const upstream = await listen((_req, res, body) => {
      res.writeHead(201, 'Made', { 'content-type': 'application/json', 'mcp-session-id': 'abc' }).end(JSON.stringify({ got: body }));
    });
    const response = await guardedFetch()(`${upstream.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"a":1}',
    });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('mcp-session-id')).toBe('abc');
    expect(await response.json()).toEqual({ got: '{"a":1}' });
    expect(upstream.seen[0]).toMatchObject({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
  });

  it('sends what fetch sent by default: accept, user-agent, accept-encoding, a text body type', async () => {
    const upstream = await listen((_req, res) => res.end('ok'));
    await (await guardedFetch()(`${upstream.origin}/x`, { method: 'POST', body: 'plain' })).text();
    expect(upstream.seen[0]).toMatchObject({
      accept: '*/*',
      'user-agent': 'node',
      'accept-encoding': 'gzip, deflate',
      'content-type': 'text/plain;charset=UTF-8',
      'content-length': '5',
    });
  });

  it('takes headers from a Headers object and never the caller’s Host', async () => {
    const upstream = await listen((_req, res) => res.end('ok'));
    const headers = new Headers({ 'x-api-key': 'k', host: 'evil.example' });
    await (await guardedFetch()(`${upstream.origin}/x`, { headers })).text();
    expect(upstream.seen[0]?.['x-api-key']).toBe('k');
    expect(upstream.seen[0]?.host).toBe(upstream.origin.slice('http://'.length));
  });

  it('joins repeated response fields and keeps set-cookie values apart', async () => {
    const upstream = await listen((_req, res) => {
      res.setHeader('x-multi', ['a', 'b']);
      res.setHeader('set-cookie', ['one=1', 'two=2']);
      res.end('ok');
    });
    const response = await guardedFetch()(`${upstream.origin}/x`);
    expect(response.headers.get('x-multi')).toBe('a, b');
    expect(response.headers.getSetCookie()).toEqual(['one=1', 'two=2']);
    await response.text();
  });

  it.each([
    ['a 202', 'POST', 202],
    ['a 204', 'POST', 204],
    ['a HEAD', 'HEAD', 200],
  ])('gives %s answer a null body', async (_label, method, status) => {
    const upstream = await listen((_req, res) => res.writeHead(status).end());
    const response = await guardedFetch()(`${upstream.origin}/x`, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
    expect(response.status).toBe(status);
    expect(response.body).toBeNull();
  });

  it('streams the body as it arrives (an SSE response is readable before it ends)', async () => {
    let finish: () => void = () => undefined;
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      finish = () => res.end('data: last\n\n');
    });
    const response = await guardedFetch()(`${upstream.origin}/sse`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    expect(first.value).toBe('data: first\n\n');
    finish();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe('data: last\n\n');
  });

  it('decodes a gzip response as fetch did', async () => {
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }).end(zlib.gzipSync('{"zipped":true}'));
    });
    const response = await guardedFetch()(`${upstream.origin}/x`);
    expect(await response.json()).toEqual({ zipped: true });
  });

  it('rejects with the signal’s reason when aborted before the answer', async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const upstream = await listen(() => arrived());
    const controller = new AbortController();
    const pending = guardedFetch()(`${upstream.origin}/slow`, { signal: controller.signal });
    await requestArrived;
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('errors the body stream when aborted while the body is being read', async () => {
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const controller = new AbortController();
    const response = await guardedFetch()(`${upstream.origin}/sse`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
  });

  it('hands a 2xx JSON answer over already read: one read of text, json or body, then the body is used', async () => {
    const upstream = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"ok":true}'));
    const fetchIt = guardedFetch();
    const first = await fetchIt(`${upstream.origin}/mcp`, { method: 'POST', body: '{}' });
    expect(first.bodyUsed).toBe(false);
    expect(await first.json()).toEqual({ ok: true });
    expect(first.bodyUsed).toBe(true);
    await expect(first.text()).rejects.toThrow(TypeError);
    const second = await fetchIt(`${upstream.origin}/mcp`, { method: 'POST', body: '{}' });
    expect(new TextDecoder().decode((await second.body!.getReader().read()).value)).toBe('{"ok":true}');
    await expect(second.json()).rejects.toThrow(TypeError);
    const third = await fetchIt(`${upstream.origin}/mcp`, { method: 'POST', body: '{}' });
    expect(new Uint8Array(await third.arrayBuffer())).toEqual(new TextEncoder().encode('{"ok":true}'));
  });

  it('rejects with the signal’s reason when aborted while a JSON answer is still arriving', async () => {
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
    });
    // The abort comes once the answer's head and first bytes reached the client (seen by an
    // interceptor on the dispatcher), so it lands while the body is being read.
    let started!: () => void;
    const answerStarted = new Promise<void>((resolve) => (started = resolve));
    const onFirstBytes: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) =>
      dispatch(opts, {
        ...bound(handler),
        onResponseData(controller, chunk) {
          handler.onResponseData?.(controller, chunk);
          started();
        },
      });
    const egress = createEgressDispatcher({ server: 'docs', allowPrivateNetwork: true, connectTimeoutMs: 5_000 });
    cleanups.push(() => egress.destroy());
    const controller = new AbortController();
    const pending = createGuardedFetch({ server: 'docs', dispatcher: egress.compose(onFirstBytes) })(`${upstream.origin}/mcp`, {
      method: 'POST',
      body: '{}',
      signal: controller.signal,
    });
    await answerStarted;
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('fails a JSON answer cut off mid-body with a TypeError, as a fetch body read does', async () => {
    const upstream = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":', () => res.destroy());
    });
    await expect(guardedFetch()(`${upstream.origin}/mcp`, { method: 'POST', body: '{}' })).rejects.toThrow(TypeError);
  });

  it('leaves no abort listener on a long-lived signal once each answer has been read (JSON or streamed)', async () => {
    const upstream = await listen((req, res) => {
      if (req.url === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: done\n\n');
    });
    const fetchIt = guardedFetch();
    const longLived = new AbortController().signal;
    for (let i = 0; i < 20; i++) {
      await (await fetchIt(`${upstream.origin}/json`, { method: 'POST', body: '{}', signal: longLived })).json();
      await (await fetchIt(`${upstream.origin}/sse`, { method: 'POST', body: '{}', signal: longLived })).text();
    }
    expect(getEventListeners(longLived, 'abort')).toHaveLength(0);
  });

  it('raises no listener-leak warning with many requests in flight on one long-lived signal', async () => {
    // Every answer is held until all 32 requests have arrived: all of them are in flight at once.
    const held: http.ServerResponse[] = [];
    const upstream = await listen((_req, res) => {
      held.push(res);
      if (held.length === 32) for (const r of held) r.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    cleanups.push(() => void process.off('warning', onWarning));
    const fetchIt = guardedFetch(new Agent({ connections: 64 }));
    const longLived = new AbortController().signal;
    await Promise.all(Array.from({ length: 32 }, async () => (await fetchIt(`${upstream.origin}/mcp`, { method: 'POST', body: '{}', signal: longLived })).json()));
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    expect(getEventListeners(longLived, 'abort')).toHaveLength(0);
  });

  it('maps a connection failure to fetch’s TypeError, naming no address in its message', async () => {
    const upstream = await listen((_req, res) => res.end());
    const closed = upstream.origin;
    await cleanups.pop()?.();
    const error = await guardedFetch(new Agent())(`${closed}/x`).then(
      () => expect.fail('expected a failure'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect(error).not.toBeInstanceOf(UpstreamError);
  });
});
