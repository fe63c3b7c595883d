/**
 * The policy's `rateLimits` through a real gateway: per principal × tool and per principal, each
 * principal's buckets its own (two principals where one's spending could starve the other), a
 * spent bucket answered as a JSON-RPC error the model can read with the delay in `data`, the
 * non-MCP routes answered 429 with `Retry-After`, and names a client makes up never keying a
 * bucket. The `requests` budget is charged once per request at the one entrance, whatever answers
 * it — the handshake, `ping`, the `search_tools` meta-tool — and `call_tool` spends its inner
 * tool's budget. Rates refill at one a minute, so nothing here depends on timing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  ERAS,
  MCP_POST_HEADERS,
  messagesOf,
  MODERN_VERSION,
  rawRequest,
  startGatewayFor,
  startUpstreams,
  textOf,
  type Upstreams,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals(
  'alice2025', 'alice2026', 'bob2025', 'bob2026', 'carol',
  ...ERAS.flatMap((era) => [`pinger${era}`, `searcher${era}`, `caller${era}`, `other${era}`]),
);
let upstreams: Upstreams;
let dir: string;
let toolGateway: RunningGateway;
let requestGateway: RunningGateway;
/** Tools deferred (search_tools, call_tool), three requests and one call per tool per principal. */
let deferredGateway: RunningGateway;

function policyFile(name: string, rateLimits: Record<string, unknown>): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ rateLimits }));
  return file;
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-rate-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  upstreams = await startUpstreams(perFile);
  toolGateway = await startGatewayFor(perFile, principals, { stdio: upstreams.servers().stdio }, {
    policy: policyFile('tools', { toolCalls: { perMinute: 1, burst: 2 } }),
  });
  requestGateway = await startGatewayFor(perFile, principals, { stdio: upstreams.servers().stdio }, {
    policy: policyFile('requests', { requests: { perMinute: 1, burst: 3 } }),
  });
  deferredGateway = await startGatewayFor(perFile, principals, { stdio: upstreams.servers().stdio }, {
    policy: policyFile('deferred', { requests: { perMinute: 1, burst: 3 }, toolCalls: { perMinute: 1, burst: 1 } }),
    catalogue: { deferTools: true },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe.each(ERAS)('per principal × tool, %s era', (era) => {
  it("refuses a principal's third call of one tool with a readable error and the delay, and nobody else's", async () => {
    const alice = await connectClient(perTest, toolGateway.url, era, { headers: principals.headers(`alice${era}`) });
    const bob = await connectClient(perTest, toolGateway.url, era, { headers: principals.headers(`bob${era}`) });
    const echo = (client: typeof alice.client) => client.callTool({ name: 'stdio__echo', arguments: { text: 'hi' } });
    expect(textOf(await echo(alice.client))).toContain('hi');
    expect(textOf(await echo(alice.client))).toContain('hi');
    const refused = await echo(alice.client).then(
      () => undefined,
      (error: unknown) => error as { code?: number; message?: string; data?: Record<string, unknown> },
    );
    expect(refused?.code).toBe(-32600);
    expect(refused?.message).toMatch(/rate limit reached: calling stdio__echo is limited to 1 a minute; retry in \d+ s/);
    expect(refused?.data).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: expect.any(Number), limit: { perMinute: 1, burst: 2 } });
    expect(refused?.data?.retryAfterMs as number).toBeGreaterThan(0);
    // Another principal's bucket is its own; another tool's bucket is too.
    expect(textOf(await echo(bob.client))).toContain('hi');
    expect(textOf(await alice.client.callTool({ name: 'stdio__slow', arguments: { ms: 0, steps: 1 } }))).toBe('slept 0ms');
  });
});

describe('per principal, every request', () => {
  it('spends on MCP requests, the handshake included, and answers the non-MCP routes 429 with Retry-After once spent', async () => {
    const headers = principals.headers('carol');
    const carol = await connectClient(perTest, requestGateway.url, '2025', { headers });
    await carol.client.listTools();
    await carol.client.listTools();
    await expect(carol.client.listTools()).rejects.toMatchObject({ code: -32600, data: { code: 'RATE_LIMITED' } });
    const readyz = await rawRequest(`${new URL(requestGateway.url).origin}/readyz`, {
      method: 'GET',
      headers: { authorization: headers.Authorization! },
    });
    expect(readyz.status).toBe(429);
    expect(Number(readyz.headers['retry-after'])).toBeGreaterThan(0);
    expect(readyz.json()).toMatchObject({ id: null, error: { data: { code: 'RATE_LIMITED' } } });
    // Another principal is not slowed by carol.
    const bob = await connectClient(perTest, requestGateway.url, '2026', { headers: principals.headers('bob2026') });
    await bob.client.listTools();
  });
});

describe('names a client makes up', () => {
  it('never key a bucket: unknown tool names answer unknown, not rate limited, however many', async () => {
    const alice = await connectClient(perTest, toolGateway.url, '2025', { headers: principals.headers('alice2025') });
    for (let i = 0; i < 20; i++) {
      await expect(alice.client.callTool({ name: `stdio__made_up_${i}`, arguments: {} })).rejects.toMatchObject({ code: -32602 });
    }
  });
});

type Refusal = { code?: number; message?: string; data?: Record<string, unknown> };

/** A raw 2026 `server/discover`; rejects with the JSON-RPC error when it is answered with one. */
async function discover(url: string, headers: Record<string, string>): Promise<unknown> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const response = await rawRequest(url, {
    headers: { ...MCP_POST_HEADERS, authorization: headers.Authorization!, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } }),
  });
  const message = messagesOf(response).at(-1) as { result?: unknown; error?: Refusal } | undefined;
  if (message?.error !== undefined) throw message.error;
  if (message?.result === undefined) throw new Error(`server/discover answered HTTP ${response.status} without a result`);
  return message.result;
}

/** Sends `request` until it is refused (at most `tries` times); the answers before the refusal and the refusal. */
async function untilRefused(tries: number, request: () => Promise<unknown>): Promise<{ answered: number; refusal: Refusal | undefined }> {
  for (let answered = 0; answered < tries; answered++) {
    const refusal = await request().then(
      () => undefined,
      (error: unknown) => error as Refusal,
    );
    if (refusal !== undefined) return { answered, refusal };
  }
  return { answered: tries, refusal: undefined };
}

describe.each(ERAS)('one charge per request at the entrance, %s era', (era) => {
  it('charges what the gateway answers itself (2025 ping, 2026 server/discover): refused once spent, and the next principal is not', async () => {
    const pinger = await connectClient(perTest, deferredGateway.url, era, { headers: principals.headers(`pinger${era}`) });
    // 2026-07-28 has no ping; its handshake is a request of its own.
    const ownAnswer = era === '2025' ? () => pinger.client.ping() : () => discover(deferredGateway.url, principals.headers(`pinger${era}`));
    // A burst of three: whatever the handshake spent, the fourth request at the latest is refused.
    const { answered, refusal } = await untilRefused(4, ownAnswer);
    expect(answered).toBeLessThanOrEqual(3);
    expect(refusal).toMatchObject({ code: -32600, data: { code: 'RATE_LIMITED', retryAfterMs: expect.any(Number) } });
    expect(refusal?.message).toMatch(/every request of this principal is limited to 1 a minute/);
    const other = await connectClient(perTest, deferredGateway.url, era, { headers: principals.headers(`other${era}`) });
    await other.client.listTools();
  });

  it('charges the search_tools meta-tool, which answers without calling any upstream', async () => {
    const searcher = await connectClient(perTest, deferredGateway.url, era, { headers: principals.headers(`searcher${era}`) });
    const { answered, refusal } = await untilRefused(4, () => searcher.client.callTool({ name: 'search_tools', arguments: { query: 'echo' } }));
    expect(answered).toBeLessThanOrEqual(3);
    expect(refusal).toMatchObject({ code: -32600, data: { code: 'RATE_LIMITED' } });
  });

  it("spends the inner tool's own budget through call_tool, shared with calling it directly", async () => {
    const caller = await connectClient(perTest, deferredGateway.url, era, { headers: principals.headers(`caller${era}`) });
    const viaMeta = () => caller.client.callTool({ name: 'call_tool', arguments: { name: 'stdio__echo', arguments: { text: 'hi' } } });
    expect(textOf(await viaMeta())).toContain('hi');
    const refused = await viaMeta().then(
      () => undefined,
      (error: unknown) => error as Refusal,
    );
    expect(refused?.message).toMatch(/calling stdio__echo is limited to 1 a minute/);
  });
});
