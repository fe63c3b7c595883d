/**
 * `search_tools` `load: true` for 2026-era callers, who have no session: the loads are kept per
 * principal (and workspace), through a real gateway with bearer authentication and real SDK v2
 * clients speaking 2026-07-28 — one principal's loads never list for another — and across two
 * gateway replicas sharing the test Redis, where a load made through one replica lists through
 * the other for that principal alone.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from './harness/cli.js';
import { assertBuilt, newMarker } from './harness/paths.js';
import { bearerPrincipals, startGatewayFor } from './harness/principals.js';
import { killPids, processesWithMarker } from './harness/processes.js';
import { stdioServer } from './harness/upstreams.js';
import { Cleanup, connectClient } from './harness.js';
import { assertSharedRedis, deleteKeysUnder, freePort, keysUnder, SHARED_REDIS_URL, uniquePrefix } from '../session/redis-helpers.js';

const cleanup = new Cleanup();
const perFile = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => perFile.run(), 60_000);

interface Found {
  tools: Array<{ name: string }>;
  loaded?: string[];
  dropped?: string[];
}

async function search(client: Client, args: Record<string, unknown>): Promise<Found> {
  const result = await client.callTool({ name: 'search_tools', arguments: args });
  return result.structuredContent as unknown as Found;
}

async function listed(client: Client): Promise<{ names: string[]; ttlMs?: number; cacheScope?: string }> {
  const result = (await client.listTools()) as unknown as { tools: Array<{ name: string }>; ttlMs?: number; cacheScope?: string };
  return { names: result.tools.map((tool) => tool.name), ...(result.ttlMs === undefined ? {} : { ttlMs: result.ttlMs }), ...(result.cacheScope === undefined ? {} : { cacheScope: result.cacheScope }) };
}

const META = ['search_tools', 'call_tool'];
const DEFER = { catalogue: { deferTools: true, maxLoadedTools: 2 } };

describe('2026-era loads, one gateway with two bearer principals', () => {
  it("lists a principal's loads to that principal's later requests, and never to the other principal", async () => {
    assertBuilt();
    const principals = bearerPrincipals('alice', 'bob');
    const gateway = await startGatewayFor(cleanup, principals, { fx: stdioServer(newMarker(), { isolation: 'shared' }) }, DEFER);
    const alice = (await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('alice') })).client;
    const bob = (await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('bob') })).client;

    const schema = (await alice.listTools()).tools[0]?.inputSchema as { properties: Record<string, unknown> };
    expect('load' in schema.properties).toBe(true);
    expect((await listed(alice)).names).toEqual(META);
    expect((await listed(bob)).names).toEqual(META);

    const found = await search(alice, { query: 'return my input text unchanged', limit: 1, load: true });
    expect(found.tools.map((t) => t.name)).toEqual(['fx__echo']);
    expect(found.loaded).toEqual(['fx__echo']);
    // A new SDK client of the same principal is a new stream of requests: the load is the principal's, not the connection's.
    const aliceAgain = (await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('alice') })).client;
    const seen = await listed(aliceAgain);
    expect(seen.names).toEqual([...META, 'fx__echo']);
    // Its own loads make the list the caller's own: private, and not to be reused past this answer.
    expect(seen.cacheScope).toBe('private');
    expect(seen.ttlMs).toBe(0);
    expect((await listed(bob)).names).toEqual(META);

    expect((await search(bob, { query: 'sleep for some milliseconds reporting progress', limit: 1, load: true })).loaded).toEqual(['fx__slow']);
    expect((await listed(bob)).names).toEqual([...META, 'fx__slow']);
    expect((await listed(alice)).names).toEqual([...META, 'fx__echo']);

    // Loaded tools are called directly, by the name search gave.
    const echoed = await alice.callTool({ name: 'fx__echo', arguments: { text: 'loaded' } });
    expect((echoed.content as Array<{ text?: string }>)[0]?.text).toBe('loaded');

    // The bound is per principal: alice's third load drops her oldest, bob's list is untouched.
    await search(alice, { query: 'fx__slow', limit: 1, load: true });
    const third = await search(alice, { query: 'fx__emit_notifications', limit: 1, load: true });
    expect(third.dropped).toEqual(['fx__echo']);
    expect((await listed(alice)).names.sort()).toEqual([...META, 'fx__emit_notifications', 'fx__slow'].sort());
    expect((await listed(bob)).names).toEqual([...META, 'fx__slow']);
  });
});

describe('2026-era loads across two replicas sharing Redis', () => {
  const SECRET = `cluster-secret-${randomUUID()}`;
  let dir: string;
  beforeAll(async () => {
    assertBuilt();
    await assertSharedRedis();
    dir = mkdtempSync(join(tmpdir(), 'portcullis-loads-'));
    perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  });

  async function replica(prefix: string, replicaId: string, principals: ReturnType<typeof bearerPrincipals>): Promise<string> {
    const marker = newMarker();
    const port = await freePort();
    const path = join(dir, `config-${replicaId}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        listen: { host: '127.0.0.1', port },
        servers: { fx: stdioServer(marker, { isolation: 'shared' }) },
        auth: principals.auth,
        eventStore: { kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: prefix, allowPrivateNetwork: true },
        cluster: { replicaId, leaseMs: 1_500, allowPrivateNetwork: true },
        ...DEFER,
      }),
    );
    const cli = spawnCli(cleanup, ['--config', path], { ...principals.env, PORTCULLIS_CLUSTER_SECRET: SECRET });
    cleanup.add(() => killPids(processesWithMarker(marker)));
    cleanup.add(async () => {
      if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
      cli.child.kill('SIGTERM');
      await cli.exited(15_000).catch(() => undefined);
    });
    return cli.waitForLine(/^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/, 30_000);
  }

  it('lists a load made through one replica through the other, for that principal alone', async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const principals = bearerPrincipals('alice', 'bob');
    const [a, b] = await Promise.all([replica(prefix, 'a', principals), replica(prefix, 'b', principals)]);
    const aliceOnA = (await connectClient(cleanup, a, '2026', { headers: principals.headers('alice') })).client;
    const aliceOnB = (await connectClient(cleanup, b, '2026', { headers: principals.headers('alice') })).client;
    const bobOnB = (await connectClient(cleanup, b, '2026', { headers: principals.headers('bob') })).client;
    const bobOnA = (await connectClient(cleanup, a, '2026', { headers: principals.headers('bob') })).client;

    expect((await search(aliceOnA, { query: 'return my input text unchanged', limit: 1, load: true })).loaded).toEqual(['fx__echo']);
    expect((await listed(aliceOnB)).names).toEqual([...META, 'fx__echo']);
    expect((await listed(bobOnB)).names).toEqual(META);
    expect((await listed(bobOnA)).names).toEqual(META);

    // What Redis holds: one list per caller, under a hash — no principal name in any key or value.
    const keys = await keysUnder(SHARED_REDIS_URL, prefix);
    const loadKeys = keys.filter((key) => key.startsWith(`${prefix}loaded:`));
    expect(loadKeys).toHaveLength(1);
    expect(keys.some((key) => key.includes('alice') || key.includes('bob'))).toBe(false);
  });
});
