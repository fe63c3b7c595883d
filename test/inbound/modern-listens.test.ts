/**
 * 2026-07-28 `subscriptions/listen` streams per principal, through a real McpEndpoint (the SDK's
 * `createMcpHandler` serving the listens) in front of a real registry of stdio fixture children:
 * one principal holds at most its share of listen streams and of resource subscriptions, the
 * refusal is 503/-32001 SUBSCRIPTION_LIMIT naming whose bound it was, another principal still
 * listens while the first is at its share, and a stream that ends gives its place back.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpEndpoint } from '../../src/inbound/endpoint.js';
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

beforeEach(() => {
  endpoint = new McpEndpoint({
    name: 'portcullis-test',
    version: '0.0.0',
    instructions: undefined,
    scope: { registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger },
    sessions: { max: 10, idleTimeoutMs: 60_000, childIdleTimeoutMs: 60_000 },
    admission: new SessionAdmission({ max: 10, maxPerPrincipal: 10, initializePerMinute: 100, logger }),
    limits: { maxBytes: 16_384, maxDepth: 16 },
    logger,
    streamAfterMs: 1_000,
    listens: { maxListensPerPrincipal: 2, maxUrisTotal: 4 },
  });
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
