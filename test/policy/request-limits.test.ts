/**
 * Which buckets a request spends from and what a refusal says (policy `rateLimits`), over the
 * in-memory store and over a real Redis shared by two "replicas" (two clients of one server), and
 * what happens when Redis cannot answer (admitted, logged once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { compileRequestLimiter, type BucketStore } from '../../src/policy/request-limits.js';
import { memoryBuckets } from '../../src/policy/memory-buckets.js';
import { redisBuckets } from '../../src/cluster/redis-buckets.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/cluster-redis.js';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { silentLogger } from '../../src/observability/logger.js';
import { assertSharedRedis, capturingLogger, deleteKeysUnder, keysUnder, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';

async function refusalOf(promise: Promise<void>): Promise<GatewayError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error as GatewayError;
  }
}

describe('the limiter of a policy', () => {
  it('is absent when the policy sets no rate', () => {
    expect(compileRequestLimiter({}, memoryBuckets())).toBeUndefined();
  });

  it('spends the principal bucket per request and the tool bucket per call, each on its own', async () => {
    let now = 0;
    const limiter = compileRequestLimiter({ requests: { perMinute: 60, burst: 3 }, toolCalls: { perMinute: 1, burst: 1 } }, memoryBuckets({ now: () => now }))!;
    await limiter.admit({ principal: 'a', method: 'tools/call' });
    await limiter.admitTool({ principal: 'a', tool: 'x__t' });
    await limiter.admit({ principal: 'a', method: 'tools/call' });
    const second = await refusalOf(limiter.admitTool({ principal: 'a', tool: 'x__t' }));
    expect(second?.code).toBe('RATE_LIMITED');
    expect(second?.message).toMatch(/calling x__t is limited to 1 a minute/);
    expect(second?.retryAfterMs).toBeGreaterThan(0);
    expect(second?.data).toMatchObject({ retryAfterMs: second?.retryAfterMs, limit: { perMinute: 1, burst: 1 } });
    // The principal bucket was spent twice (once per request, the refused call too): one left.
    await limiter.admit({ principal: 'a', method: 'tools/list' });
    expect((await refusalOf(limiter.admit({ principal: 'a', method: 'tools/list' })))?.message).toMatch(/every request of this principal is limited to 60 a minute/);
    // Another principal starts full, in both buckets.
    await limiter.admit({ principal: 'b', method: 'tools/call' });
    await limiter.admitTool({ principal: 'b', tool: 'x__t' });
    // A second later the principal bucket has one token again.
    now += 1_000;
    await limiter.admit({ principal: 'a', method: 'tools/list' });
  });

  it('keeps the anonymous principal apart from a principal named like it', async () => {
    const limiter = compileRequestLimiter({ requests: { perMinute: 1, burst: 1 } }, memoryBuckets())!;
    await limiter.admit({ principal: undefined, method: 'ping' });
    await limiter.admit({ principal: 'anonymous', method: 'ping' });
    expect(await refusalOf(limiter.admit({ principal: undefined, method: 'ping' }))).toBeInstanceOf(GatewayError);
  });
});

describe('buckets in Redis', () => {
  const prefix = uniquePrefix();
  const clients: ClusterRedis[] = [];
  const connected = async () => {
    const client = createClusterRedis(SHARED_REDIS_URL, true, silentLogger());
    clients.push(client);
    await client.connect();
    return client;
  };
  beforeAll(() => assertSharedRedis());
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
    await deleteKeysUnder(SHARED_REDIS_URL, prefix);
  });

  it('are shared by replicas: what one spends, the other cannot', async () => {
    const keys = clusterKeys(prefix);
    const a: BucketStore = redisBuckets(await connected(), keys, silentLogger());
    const b: BucketStore = redisBuckets(await connected(), keys, silentLogger());
    const spec = { perMinute: 1, burst: 2 };
    expect(await a.take('alice', spec)).toEqual({ ok: true });
    expect(await b.take('alice', spec)).toEqual({ ok: true });
    const third = await a.take('alice', spec);
    expect(third.ok).toBe(false);
    expect(!third.ok && third.retryAfterMs).toBeGreaterThan(0);
    expect(await b.take('bob', spec)).toEqual({ ok: true });
    // One hash per bucket, named by a digest: no principal name in Redis, and each expires.
    const stored = await keysUnder(SHARED_REDIS_URL, prefix);
    expect(stored).toHaveLength(2);
    expect(stored.join(' ')).not.toMatch(/alice|bob/);
    for (const key of stored) expect(await withRedis(SHARED_REDIS_URL, (c) => c.pTTL(key))).toBeGreaterThan(0);
  });

  it('admit requests when Redis cannot answer, saying so once', async () => {
    const client = createClusterRedis('redis://127.0.0.1:1', true, silentLogger());
    client.on('error', () => undefined);
    clients.push(client);
    const { logger, lines } = capturingLogger();
    const store = redisBuckets(client, clusterKeys(prefix), logger);
    expect(await store.take('alice', { perMinute: 1, burst: 1 })).toEqual({ ok: true });
    expect(await store.take('alice', { perMinute: 1, burst: 1 })).toEqual({ ok: true });
    expect(lines.filter((line) => String(line.msg).includes('rate limits: redis unavailable'))).toHaveLength(1);
  });
});
