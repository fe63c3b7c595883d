/**
 * The policy's `rateLimits` through a real gateway: per principal × tool and per principal, each
 * principal's buckets its own (two principals where one's spending could starve the other), a
 * spent bucket answered as a JSON-RPC error the model can read with the delay in `data`, the
 * non-MCP routes answered 429 with `Retry-After`, and names a client makes up never keying a
 * bucket. Rates refill at one a minute, so nothing here depends on timing.
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
  rawRequest,
  startGatewayFor,
  startUpstreams,
  textOf,
  type Upstreams,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals('alice2025', 'alice2026', 'bob2025', 'bob2026', 'carol');
let upstreams: Upstreams;
let dir: string;
let toolGateway: RunningGateway;
let requestGateway: RunningGateway;

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
  it('spends on MCP requests and answers the non-MCP routes 429 with Retry-After once spent', async () => {
    const headers = principals.headers('carol');
    const carol = await connectClient(perTest, requestGateway.url, '2025', { headers });
    await carol.client.listTools();
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
