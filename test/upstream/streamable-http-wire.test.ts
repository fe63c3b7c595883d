/**
 * The Streamable HTTP wire (src/upstream/streamable-http.ts): every request is sent once, with
 * the protocol headers plus the configured and environment ones; its answer is read as what it
 * is (one JSON body, an event stream, an error status, a redirect, an over-long body), and a 2025
 * session's standalone GET stream carries what the server sends outside any request. The upstream
 * is a small hand-written server on 127.0.0.1 that records every request. NETWORK SAFETY:
 * loopback only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { createEgressDispatcher } from '../../src/net/egress-guard.js';
import { createConnector } from '../../src/upstream/connector.js';
import { UpstreamLink } from '../../src/upstream/link.js';
import { listenOnLoopback, type ListeningProxy } from '../integration/harness/loopback-proxy.js';
import { deps, logger, recordingSink, serverConfigs } from './fixture-link.js';

type Mode = 'json' | 'sse' | 'status500' | 'status404' | 'redirect' | 'huge';

interface Seen {
  method: string;
  id: unknown;
  headers: IncomingMessage['headers'];
}

let mode: Mode = 'json';
const posts: Seen[] = [];
/** Answer `server/discover` as a 2026-07-28 server. */
let modern = false;
/** Offer the standalone GET stream, and send this on it once opened. */
let getStreamSends: object | undefined;
const gets: IncomingMessage['headers'][] = [];
let upstream: ListeningProxy;

function answerCall(res: ServerResponse, id: unknown, text: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
  switch (mode) {
    case 'json':
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    case 'sse':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'first' } })}\n\n`);
      res.end(`event: message\ndata: ${body}\n\n`);
      return;
    case 'status500':
      res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream broke');
      return;
    case 'status404':
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such session');
      return;
    case 'redirect':
      mode = 'json';
      res.writeHead(307, { location: '/moved' }).end();
      return;
    case 'huge':
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(4096) } }));
  }
}

beforeAll(async () => {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && getStreamSends !== undefined) {
      gets.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify(getStreamSends)}\n\n`);
      return;
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method?: string; id?: unknown; params?: { arguments?: { text?: string } } };
      posts.push({ method: message.method ?? '(response)', id: message.id, headers: req.headers });
      if (message.method === 'server/discover' && modern) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } }));
        return;
      }
      if (message.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'upstream-session-1' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'lean', version: '1' } } }));
        return;
      }
      if (message.id === undefined) return void res.writeHead(202).end();
      answerCall(res, message.id, message.params?.arguments?.text ?? '');
    });
  });
  upstream = await listenOnLoopback(server, '/mcp');
});

afterAll(() => upstream.close());

let link: UpstreamLink;

function webConfig() {
  return serverConfigs({
    web: { transport: 'streamableHttp', url: upstream.url, allowPrivateNetwork: true, headers: { 'x-static': 'configured' }, envHeaders: { 'x-token': 'LEAN_TEST_TOKEN' } },
  }).web!;
}

function connectWeb(negotiation: 'auto' | '2025'): Promise<UpstreamLink> {
  const connector = createConnector('web', webConfig(), { ...deps, allowedEnvNames: undefined, maxMessageBytes: 1024, dispatcherFor: () => createEgressDispatcher({ server: 'web', allowPrivateNetwork: true, connectTimeoutMs: 5_000, logger }) }, logger);
  return UpstreamLink.connect({ server: 'web', transport: connector.transport, negotiation, requestTimeoutMs: 10_000, logger, clientCapabilities: {}, exclusive: true });
}

beforeEach(async () => {
  mode = 'json';
  modern = false;
  getStreamSends = undefined;
  process.env.LEAN_TEST_TOKEN = 'first-token';
  const config = serverConfigs({
    web: { transport: 'streamableHttp', url: upstream.url, allowPrivateNetwork: true, headers: { 'x-static': 'configured' }, envHeaders: { 'x-token': 'LEAN_TEST_TOKEN' } },
  }).web!;
  const connector = createConnector('web', config, { ...deps, allowedEnvNames: undefined, maxMessageBytes: 1024, dispatcherFor: () => createEgressDispatcher({ server: 'web', allowPrivateNetwork: true, connectTimeoutMs: 5_000, logger }) }, logger);
  link = await UpstreamLink.connect({ server: 'web', transport: connector.transport, negotiation: '2025', requestTimeoutMs: 10_000, logger, clientCapabilities: {}, exclusive: true });
  posts.length = 0;
  return () => link.close();
});

const call = (text: string, sink = recordingSink()) => link.request('tools/call', { name: 'echo', arguments: { text } }, { sink });
const callsSent = () => posts.filter((p) => p.method === 'tools/call');

describe('the Streamable HTTP wire', () => {
  it('sends a JSON-answered call once, with the session, version, configured and environment headers', async () => {
    await expect(call('hello')).resolves.toEqual({ content: [{ type: 'text', text: 'hello' }] });
    const [sent] = callsSent();
    expect(callsSent()).toHaveLength(1);
    expect(sent!.headers).toMatchObject({
      'mcp-session-id': 'upstream-session-1',
      'mcp-protocol-version': '2025-11-25',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-static': 'configured',
      'x-token': 'first-token',
    });
  });

  it('reads an environment header again for every request (a rotated secret is picked up)', async () => {
    await call('one');
    process.env.LEAN_TEST_TOKEN = 'rotated-token';
    await call('two');
    expect(callsSent().map((p) => p.headers['x-token'])).toEqual(['first-token', 'rotated-token']);
  });

  it('reads an event-stream answer: the notification before the result is relayed, the call sent once', async () => {
    mode = 'sse';
    const sink = recordingSink();
    await expect(call('streamed', sink)).resolves.toEqual({ content: [{ type: 'text', text: 'streamed' }] });
    expect(sink.seen.map((m) => m.method)).toEqual(['notifications/message']);
    expect(callsSent()).toHaveLength(1);
  });

  it('fails a call answered with an error status, without sending it again', async () => {
    mode = 'status500';
    await expect(call('broken')).rejects.toBeInstanceOf(UpstreamError);
    expect(callsSent()).toHaveLength(1);
  });

  it('keeps the 404 of a forgotten session recognisable (the call is retried on a fresh connection upstream of here)', async () => {
    mode = 'status404';
    const error = await call('lost').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    const { upstreamSessionLost } = await import('../../src/upstream/connector.js');
    expect(upstreamSessionLost(serverConfigs({ web: { transport: 'streamableHttp', url: upstream.url, allowPrivateNetwork: true } }).web!, error)).toBe(true);
    expect(callsSent()).toHaveLength(1);
  });

  it('follows a same-origin redirect with the same body and headers', async () => {
    mode = 'redirect';
    await expect(call('moved')).resolves.toEqual({ content: [{ type: 'text', text: 'moved' }] });
    expect(callsSent()).toHaveLength(2);
    expect(callsSent()[1]!.headers['x-static']).toBe('configured');
  });

  it('refuses a JSON answer over the message cap with UPSTREAM_MESSAGE_TOO_LARGE naming the server', async () => {
    mode = 'huge';
    const error = await call('big').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('UPSTREAM_MESSAGE_TOO_LARGE');
    expect((error as UpstreamError).message).toContain('web');
  });

  it('fails calls in flight when the link closes', async () => {
    mode = 'json';
    const pending = Array.from({ length: 4 }, (_, i) => call(`c${i}`).then(() => 'answered', () => 'failed'));
    await link.close();
    const outcomes = await Promise.all(pending);
    expect(outcomes.every((o) => o === 'answered' || o === 'failed')).toBe(true);
    await expect(call('after')).rejects.toBeInstanceOf(UpstreamError);
  });

  it('mirrors a 2026 request’s version, method and name into headers, a name that is not plain ASCII in base64', async () => {
    modern = true;
    const modernLink = await connectWeb('auto');
    try {
      expect(modernLink.era).toBe('2026');
      posts.length = 0;
      await modernLink.request('tools/call', { name: 'echo', arguments: { text: 'a' } }, { sink: recordingSink() });
      await modernLink.request('tools/call', { name: 'café', arguments: { text: 'b' } }, { sink: recordingSink() });
      const [plain, encoded] = callsSent();
      expect(plain!.headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
      expect(encoded!.headers['mcp-name']).toBe(`=?base64?${Buffer.from('café').toString('base64')}?=`);
      expect(plain!.headers['mcp-session-id']).toBeUndefined();
    } finally {
      await modernLink.close();
    }
  });

  it('opens the standalone GET stream of a 2025 session and hears the server’s list change on it', async () => {
    getStreamSends = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    gets.length = 0;
    const heard = new Promise<string>((resolve) => {
      void connectWeb('2025').then((opened) => {
        opened.on((event) => {
          if (event.kind === 'listChanged') resolve(event.list);
        });
        cleanupLinks.push(opened);
      });
    });
    await expect(heard).resolves.toBe('tools');
    expect(gets[0]).toMatchObject({ 'mcp-session-id': 'upstream-session-1', accept: 'text/event-stream', 'x-static': 'configured' });
  });
});

const cleanupLinks: UpstreamLink[] = [];
afterAll(() => Promise.all(cleanupLinks.map((l) => l.close())));
