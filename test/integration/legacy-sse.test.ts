/**
 * Clients of the deprecated HTTP+SSE transport (MCP 2024-11-05) through a real gateway, to the
 * stdio and the HTTP fixture: the SDK's `SSEClientTransport` (v2 and 1.x) for what a real client
 * does, a raw node:http client for the wire itself (the `endpoint` event, 202s, messages on the
 * stream, refusals), and /proc for the children a session leaves behind when its stream goes.
 */
import { randomUUID } from 'node:crypto';
import { Client, SSEClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SSEClientTransport1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { describe, expect, it } from 'vitest';
import {
  collectNotifications,
  gatewayOverUpstreams,
  isAlive,
  processesWithMarker,
  rawRequest,
  sideChannelUrl,
  textOf,
  UPSTREAM_KINDS,
  waitUntil,
  within,
} from './harness.js';
import { announcedEndpoint, INITIALIZE_2024, openRawSse, openRawSseSession, postMessage } from './harness/raw-sse.js';

// Sessions' own stdio children are part of what this file tests: `session` isolation.
const scope = gatewayOverUpstreams({ stdio: { isolation: 'session' }, http: { isolation: 'session' } });
const { perTest } = scope;
const sseUrl = (url = scope.gateway.url) => `${url}/sse`;

/** An SDK v2 client over `SSEClientTransport` at `url`; closed after the test. */
async function connectSse(url: string, capabilities: ClientCapabilities = {}, setup?: (client: Client) => void): Promise<Client> {
  const client = new Client({ name: 'sse-client', version: '1.0.0' }, { capabilities });
  setup?.(client);
  await within(client.connect(new SSEClientTransport(new URL(url))), 15_000, 'SSE client connect');
  perTest.add(() => within(client.close(), 5_000, 'SSE client close').catch(() => undefined));
  return client;
}

describe.each(UPSTREAM_KINDS)('an SDK SSE client through the gateway to the %s fixture', (server) => {
  it('initializes, lists the tools and calls one', async () => {
    const client = await connectSse(sseUrl());
    expect(client.getServerVersion()?.name).toBe('portcullis');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(`${server}__echo`);
    const result = await client.callTool({ name: `${server}__echo`, arguments: { text: 'over sse' } });
    expect(textOf(result)).toBe('over sse');
  });

  it('receives the progress of a call, in order', async () => {
    const client = await connectSse(sseUrl());
    const seen: number[] = [];
    await client.callTool({ name: `${server}__test_tool_with_progress`, arguments: {} }, { onprogress: (p) => seen.push(p.progress) });
    expect(seen).toEqual([0, 50, 100]);
  });

  it('answers an elicitation and a sampling request the upstream asks mid-call', async () => {
    const answer = `answer-${randomUUID()}`;
    const client = await connectSse(sseUrl(), { sampling: {}, elicitation: { form: {} } }, (c) => {
      c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { response: answer } }));
      c.setRequestHandler('sampling/createMessage', () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: answer } }));
    });
    const elicited = await client.callTool({ name: `${server}__test_elicitation`, arguments: { message: 'Your name?' } });
    expect(textOf(elicited)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify({ response: answer })}`);
    const sampled = await client.callTool({ name: `${server}__test_sampling`, arguments: { prompt: 'What is 2+2?' } });
    expect(textOf(sampled)).toBe(`LLM response: ${answer}`);
  });

  it('receives the notifications a call sends, in order', async () => {
    const client = await connectSse(sseUrl());
    const logs = collectNotifications<{ data: { seq: number } }>(client, 'notifications/message');
    await client.callTool({ name: `${server}__emit_notifications`, arguments: { count: 5 } });
    expect((await logs.waitFor(5)).map((m) => m.data.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reaches the server unprefixed on its side channel', async () => {
    const client = await connectSse(sseUrl(sideChannelUrl(scope.gateway.url, server)));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'side' } });
    expect(textOf(result)).toBe('side');
  });
});

describe('an SDK 1.x SSE client', () => {
  it('initializes, lists and calls through the gateway', async () => {
    const client = new Client1({ name: 'sdk1-sse', version: '1.0.0' });
    await within(client.connect(new SSEClientTransport1(new URL(sseUrl()))), 15_000, 'SDK 1.x SSE connect');
    perTest.add(() => client.close().catch(() => undefined));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['stdio__echo', 'http__echo']));
    const result = await client.callTool({ name: 'http__echo', arguments: { text: 'one-x' } });
    expect(textOf(result as { content?: unknown })).toBe('one-x');
  });
});

describe('the HTTP+SSE wire', () => {
  it('opens with the endpoint event naming the message URL on the same origin, then answers POSTs 202 and puts responses on the stream', async () => {
    const stream = await openRawSse(sseUrl());
    perTest.add(() => stream.close());
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    const endpoint = await announcedEndpoint(stream, sseUrl());
    expect(stream.events[0]!.data).toMatch(/^\/mcp\/messages\?sessionId=[0-9a-f-]{36}$/);
    expect(new URL(endpoint).origin).toBe(new URL(scope.gateway.url).origin);

    const accepted = await postMessage(endpoint, { id: 1, method: 'initialize', params: INITIALIZE_2024 });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toBe('');
    const result = await stream.waitForMessage((m) => m.id === 1, 'the initialize result');
    expect(result).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2024-11-05', serverInfo: { name: 'portcullis' } } });
    expect((await postMessage(endpoint, { method: 'notifications/initialized' })).status).toBe(202);
    expect((await postMessage(endpoint, { id: 2, method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: 'raw' } } })).status).toBe(202);
    const call = await stream.waitForMessage((m) => m.id === 2, 'the call result');
    expect(call).toMatchObject({ result: { content: [{ type: 'text', text: 'raw' }] } });
  });

  it('announces the side channel’s own message URL', async () => {
    const url = sseUrl(sideChannelUrl(scope.gateway.url, 'http'));
    const stream = await openRawSse(url);
    perTest.add(() => stream.close());
    await announcedEndpoint(stream, url);
    expect(stream.events[0]!.data).toMatch(/^\/mcp\/servers\/http\/messages\?sessionId=/);
  });

  it('refuses messages before initialize, and a second initialize', async () => {
    const stream = await openRawSse(sseUrl());
    perTest.add(() => stream.close());
    const endpoint = await announcedEndpoint(stream, sseUrl());
    const early = await postMessage(endpoint, { id: 1, method: 'tools/list' });
    expect(early.status).toBe(400);
    expect(early.json().error?.message).toContain('not initialized');
    expect((await postMessage(endpoint, { id: 2, method: 'initialize', params: INITIALIZE_2024 })).status).toBe(202);
    expect((await postMessage(endpoint, { id: 3, method: 'initialize', params: INITIALIZE_2024 })).status).toBe(400);
  });

  it('answers 404 for an unknown sessionId, 400 without one, and nothing else reaches a session', async () => {
    const messages = `${scope.gateway.url}/messages`;
    const unknown = await postMessage(`${messages}?sessionId=${randomUUID()}`, { id: 1, method: 'ping' });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: 'Session not found' } });
    expect((await postMessage(messages, { id: 1, method: 'ping' })).status).toBe(400);
  });

  it('does not take an HTTP+SSE token as a Streamable HTTP session id', async () => {
    const { endpoint } = await openRawSseSession(sseUrl()).then((s) => (perTest.add(() => s.stream.close()), s));
    const token = new URL(endpoint).searchParams.get('sessionId')!;
    const streamable = await rawRequest(scope.gateway.url, {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': token },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(streamable.status).toBe(404);
  });

  it('refuses a body over the limit with 413 before it reaches the session', async () => {
    const { stream, endpoint } = await openRawSseSession(sseUrl());
    perTest.add(() => stream.close());
    const big = await postMessage(endpoint, { id: 7, method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: 'x'.repeat(1_100_000) } } });
    expect(big.status).toBe(413);
    expect(stream.messages().some((m) => m.id === 7)).toBe(false);
  });

  it('refuses a duplicate in-flight request id, as any 2025-era session does', async () => {
    const { stream, post } = await openRawSseSession(sseUrl());
    perTest.add(() => stream.close());
    expect((await post({ id: 5, method: 'tools/call', params: { name: 'stdio__slow', arguments: { ms: 2_000, steps: 1 } } })).status).toBe(202);
    const twice = await post({ id: 5, method: 'ping' });
    expect(twice.status).toBe(400);
    expect(twice.json().error?.message).toContain('already in flight');
  });

  it('answers other methods with 405', async () => {
    expect((await rawRequest(sseUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(405);
    expect((await rawRequest(`${scope.gateway.url}/messages?sessionId=x`, { method: 'GET' })).status).toBe(405);
  });

  it('keeps the Host and Origin guards on both routes', async () => {
    const { stream, endpoint } = await openRawSseSession(sseUrl());
    perTest.add(() => stream.close());
    const port = new URL(scope.gateway.url).port;
    const rebound = await openRawSse(sseUrl(), { host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    const foreign = await openRawSse(sseUrl(), { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const post = await postMessage(endpoint, { id: 11, method: 'ping' }, { host: `evil.example:${port}` });
    expect(post.status).toBe(403);
    expect(stream.messages().some((m) => m.id === 11)).toBe(false);
  });
});

describe('an HTTP+SSE session whose stream goes', () => {
  it('is closed: its own stdio child is reaped and its message URL answers 404', async () => {
    const marker = scope.upstreams.marker;
    const before = new Set(processesWithMarker(marker));
    const { stream, endpoint } = await openRawSseSession(sseUrl());
    // Session isolation: the session's first call starts a stdio child of its own.
    expect((await postMessage(endpoint, { id: 2, method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: 'spawn' } } })).status).toBe(202);
    await waitUntil(() => stream.messages().some((m) => m.id === 2), 'the first call’s answer');
    const own = await waitUntil(() => processesWithMarker(marker).filter((pid) => !before.has(pid)), 'the session’s child', 15_000).then(
      (pids) => (pids.length > 0 ? pids : undefined),
    );
    stream.close();
    await waitUntil(() => own!.every((pid) => !isAlive(pid)), 'the session’s child to be reaped', 15_000);
    await waitUntil(async () => (await postMessage(endpoint, { id: 1, method: 'ping' })).status === 404, 'the session to be gone');
  });
});
