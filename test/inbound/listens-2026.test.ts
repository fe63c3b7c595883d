/**
 * 2026-07-28 `subscriptions/listen` streams (src/inbound/listens-2026.ts), in front of a real
 * registry of stdio fixture children:
 * - per principal, through a real McpEndpoint: one principal holds at most its share of listen
 *   streams and of resource subscriptions, the refusal is 503/-32001 SUBSCRIPTION_LIMIT naming
 *   whose bound it was, another principal still listens while the first is at its share, and a
 *   stream that ends gives its place back;
 * - the streams themselves: the acknowledgement names only what the endpoint declares, changes
 *   reach only the streams that asked, stamped with their own `subscriptionId`, the endpoint's own
 *   bound refuses like every other, and closing the endpoint ends each stream with the empty
 *   result naming the listen and the gateway;
 * - the endpoint's own bound holds for listens that arrive together (each still subscribing
 *   upstream when the next is judged), and every refusal reaches the operator's log.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpEndpoint } from '../../src/inbound/endpoint.js';
import { ListenStreams } from '../../src/inbound/listens-2026.js';
import { ResourceListens } from '../../src/routing/listens/resource-listens.js';
import { SessionAdmission } from '../../src/session/session-admission.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { WATCHED_URI } from '../fixtures/fixture-resources-prompts.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

const MODERN_VERSION = '2026-07-28';
let registry: UpstreamRegistry;
let endpoint: McpEndpoint;
const open: Array<{ abort: AbortController; body: ReadableStream<Uint8Array> | null }> = [];

beforeAll(async () => {
  assertBuilt();
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: stdioServer(newMarker(), { isolation: 'shared' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
});
afterAll(() => registry.close());

/** An endpoint in front of the registry; `logger` and `listens` as the test needs. */
function endpointWith(options: { logger?: typeof logger; listens?: { maxListens?: number; maxListensPerPrincipal?: number; maxUrisTotal?: number } } = {}) {
  return new McpEndpoint({
    name: 'portcullis-test',
    version: '0.0.0',
    instructions: undefined,
    scope: { registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger },
    sessions: { max: 10, idleTimeoutMs: 60_000 },
    admission: new SessionAdmission({ max: 10, maxPerPrincipal: 10, initializePerMinute: 100, logger }),
    limits: { maxBytes: 16_384, maxDepth: 16 },
    logger: options.logger ?? logger,
    streamAfterMs: 1_000,
    listens: options.listens ?? { maxListensPerPrincipal: 2, maxUrisTotal: 4 },
  });
}

beforeEach(() => {
  endpoint = endpointWith();
});
afterEach(async () => {
  for (const stream of open.splice(0)) {
    stream.abort.abort();
    await stream.body?.cancel().catch(() => undefined);
  }
  await endpoint.close();
});

let nextId = 0;

/** A raw 2026 listen as `principal`; the answer's stream stays open until the test ends or `end` is called. */
async function listen(principal: string | undefined, notifications: Record<string, unknown>) {
  const abort = new AbortController();
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    signal: abort.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: `listen-${(nextId += 1)}`,
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const response = await endpoint.fetch(request, { principal, access: undefined });
  const stream = { abort, body: response.body };
  open.push(stream);
  const end = async () => {
    abort.abort();
    await response.body?.cancel().catch(() => undefined);
  };
  return { response, end };
}

async function refusalOf(response: Response) {
  expect(response.headers.get('content-type')).toContain('application/json');
  return ((await response.json()) as { error: { code: number; message: string; data?: Record<string, unknown> } }).error;
}

const streaming = (response: Response) => response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');

describe('listens per principal', () => {
  it("refuses a principal's listen past its share of streams, while another principal still listens, and frees the place when a stream ends", async () => {
    const first = await listen('alice', { toolsListChanged: true });
    const second = await listen('alice', { toolsListChanged: true });
    expect(streaming(first.response) && streaming(second.response)).toBe(true);
    const refused = await listen('alice', { toolsListChanged: true });
    expect(refused.response.status).toBe(503);
    const error = await refusalOf(refused.response);
    expect(error.code).toBe(-32001);
    expect(error.data).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: { scope: 'principal', counts: 'listens', max: 2 } });
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
    // Bob's share is his own.
    const bob = await listen('bob', { toolsListChanged: true });
    expect(streaming(bob.response)).toBe(true);
    // Alice's hang-up gives her place back.
    await first.end();
    let again: Awaited<ReturnType<typeof listen>> | undefined;
    await waitUntil(async () => {
      again = await listen('alice', { toolsListChanged: true });
      if (streaming(again.response)) return true;
      await again.response.body?.cancel();
      return false;
    }, "alice's place came back");
    expect(again && streaming(again.response)).toBe(true);
  });

  it('holds one principal to half the resource subscriptions, leaving the other half to others', async () => {
    const alice = await listen('alice', { resourceSubscriptions: [WATCHED_URI, 'test://static-text'] });
    expect(streaming(alice.response)).toBe(true);
    const more = await listen('alice', { resourceSubscriptions: ['test://static-binary'] });
    expect(more.response.status).toBe(503);
    expect((await refusalOf(more.response)).data).toMatchObject({
      code: 'SUBSCRIPTION_LIMIT',
      limit: { scope: 'principal', counts: 'resourceSubscriptions', max: 2 },
    });
    const bob = await listen('bob', { resourceSubscriptions: [WATCHED_URI, 'test://static-binary'] });
    expect(streaming(bob.response)).toBe(true);
  });
});

describe('the listen streams', () => {
  const face = { capabilities: { tools: { listChanged: true }, prompts: {} }, serverInfo: { name: 'portcullis-test', version: '0.0.0' } };
  const caller = { principal: undefined, workspace: undefined, catalogue: () => endpoint.listingView(undefined, undefined).catalogue };
  let resources: ResourceListens;
  let streams: ListenStreams;
  beforeEach(() => {
    resources = new ResourceListens({ registry, servers: ServerRoster.of(['fx']), logger });
    streams = new ListenStreams(resources, { maxListens: 2, logger });
  });
  afterEach(() => {
    streams.close();
    resources.close();
  });

  const listenMessage = (id: string, notifications: Record<string, unknown>) => ({
    jsonrpc: '2.0' as const,
    id,
    method: 'subscriptions/listen',
    params: { notifications, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } },
  });

  /** The SSE events of `response` read so far, as JSON-RPC messages, once `count` have arrived. */
  async function events(reader: ReadableStreamDefaultReader<Uint8Array>, count: number, seen: Array<Record<string, unknown>> = []) {
    const decoder = new TextDecoder();
    let buffered = '';
    while (seen.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const parts = buffered.split('\n\n');
      buffered = parts.pop() ?? '';
      for (const part of parts) if (part.startsWith('event: message')) seen.push(JSON.parse(part.slice(part.indexOf('data: ') + 6)) as Record<string, unknown>);
    }
    return seen;
  }

  it('acknowledges only what the endpoint declares, and tells each change only to the streams that asked, each under its own id', async () => {
    const tools = await streams.serve(listenMessage('t', { toolsListChanged: true, promptsListChanged: true }), caller, face, new AbortController().signal);
    const prompts = await streams.serve(listenMessage('p', { promptsListChanged: true, toolsListChanged: false }), caller, face, new AbortController().signal);
    expect(tools.headers.get('content-type')).toBe('text/event-stream');
    const toolsReader = tools.body!.getReader();
    const [ack] = await events(toolsReader, 1);
    // Prompts are declared without listChanged: that part of the filter is not honoured.
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 't' } },
    });
    // The second listen asked for nothing the endpoint delivers: acknowledged empty, and ended by the server at once.
    const ended = await events(prompts.body!.getReader(), 2);
    expect(ended[0]).toMatchObject({ params: { notifications: {} } });
    expect(ended[1]).toEqual({
      jsonrpc: '2.0',
      id: 'p',
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'p', 'io.modelcontextprotocol/serverInfo': face.serverInfo } },
    });
    expect(streams.streams).toBe(1);
    streams.publish('prompts');
    streams.publish('tools');
    const [change] = await events(toolsReader, 1);
    expect(change).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 't' } } });
    await toolsReader.cancel();
  });

  it('refuses a listen past the endpoint’s open streams with SUBSCRIPTION_LIMIT, as it refuses past any other listen bound', async () => {
    const first = await streams.serve(listenMessage('a', { toolsListChanged: true }), caller, face, new AbortController().signal);
    const second = await streams.serve(listenMessage('b', { toolsListChanged: true }), caller, face, new AbortController().signal);
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await streams.serve(listenMessage('c', { toolsListChanged: true }), caller, face, new AbortController().signal);
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { id: string; error: { code: number; data: Record<string, unknown> } };
    expect(body.id).toBe('c');
    expect(body.error.code).toBe(-32001);
    expect(body.error.data).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: { scope: 'gateway', counts: 'listens', max: 2 } });
    // A client that stops reading gives its place back.
    await first.body!.cancel();
    const again = await streams.serve(listenMessage('d', { toolsListChanged: true }), caller, face, new AbortController().signal);
    expect(again.status).toBe(200);
    await second.body!.cancel();
    await again.body!.cancel();
  });

  it('ends every stream with the empty result naming the listen and the gateway when the endpoint closes', async () => {
    const response = await streams.serve(listenMessage('z', { toolsListChanged: true }), caller, face, new AbortController().signal);
    const reader = response.body!.getReader();
    await events(reader, 1);
    streams.close();
    const [last] = await events(reader, 1);
    expect(last).toEqual({
      jsonrpc: '2.0',
      id: 'z',
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'z', 'io.modelcontextprotocol/serverInfo': face.serverInfo } },
    });
    expect((await reader.read()).done).toBe(true);
    expect(streams.streams).toBe(0);
  });

  it('ends a stream when its request’s signal aborts (the client hung up)', async () => {
    const abort = new AbortController();
    const response = await streams.serve(listenMessage('h', { toolsListChanged: true }), caller, face, abort.signal);
    const reader = response.body!.getReader();
    await events(reader, 1);
    expect(streams.streams).toBe(1);
    abort.abort();
    expect(streams.streams).toBe(0);
    expect((await reader.read()).done).toBe(true);
  });
});


describe('the endpoint’s bound on listens', () => {
  const MAX_LISTENS = 3;
  /** What the endpoint logged (JSON lines), for the operator's view of refusals. */
  let logLines: Array<Record<string, unknown>>;
  beforeEach(async () => {
    await endpoint.close();
    logLines = [];
    const captured = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) });
    endpoint = endpointWith({ logger: captured, listens: { maxListens: MAX_LISTENS, maxListensPerPrincipal: 2, maxUrisTotal: 16 } });
  });

  it('holds for listens that arrive together, each still subscribing upstream when the next is judged', async () => {
    // Anonymous callers have no share of their own: the endpoint's bound alone stands between
    // them and every place. Eight at once, each naming a resource (so each waits on the upstream).
    const answers = await Promise.all(Array.from({ length: 8 }, () => listen(undefined, { toolsListChanged: true, resourceSubscriptions: [WATCHED_URI] })));
    const opened = answers.filter((answer) => streaming(answer.response));
    const refused = answers.filter((answer) => !streaming(answer.response));
    expect(opened).toHaveLength(MAX_LISTENS);
    for (const answer of refused) {
      expect(answer.response.status).toBe(503);
      expect((await refusalOf(answer.response)).data).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', limit: { scope: 'gateway', counts: 'listens', max: MAX_LISTENS } });
    }
    expect(endpoint.open2026.listens).toBe(MAX_LISTENS);
    // A place given back is taken again; the bound still holds after.
    await opened[0]!.end();
    await waitUntil(() => endpoint.open2026.listens === MAX_LISTENS - 1, 'the ended listen to leave');
    expect(streaming((await listen(undefined, { toolsListChanged: true })).response)).toBe(true);
    expect((await listen(undefined, { toolsListChanged: true })).response.status).toBe(503);
  });

  it('tells the operator, once per kind and interval, whose bound refused listens — never silently', async () => {
    await listen('alice', { toolsListChanged: true });
    await listen('alice', { toolsListChanged: true });
    for (let i = 0; i < 3; i += 1) expect((await listen('alice', { toolsListChanged: true })).response.status).toBe(503);
    await listen('bob', { toolsListChanged: true });
    for (let i = 0; i < 3; i += 1) expect((await listen('carol', { toolsListChanged: true })).response.status).toBe(503);
    const warnings = logLines.filter((line) => line.level === 40 && String(line.msg).startsWith('listen refused'));
    expect(warnings).toEqual([
      expect.objectContaining({ principal: 'alice', counts: 'listens', limit: 2, refused: 1, msg: expect.stringContaining('a principal holds its share') }),
      expect.objectContaining({ counts: 'listens', limit: MAX_LISTENS, refused: 1, msg: expect.stringContaining('the endpoint holds every') }),
    ]);
    expect(warnings[1]).not.toHaveProperty('principal');
  });
});
