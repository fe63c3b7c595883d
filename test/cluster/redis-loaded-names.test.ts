/**
 * The tools 2026-era callers loaded, in the test Redis as replicas share them: what two replicas
 * load for one caller stays within the bound (one atomic script), callers never mix, Redis holds
 * hashes only and forgets an idle caller, and an outage lists nothing and refuses a load, saying so
 * once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/cluster-keys.js';
import { createClusterRedis, type ClusterRedis } from '../../src/cluster/cluster-redis.js';
import { redisLoadedNames } from '../../src/cluster/redis-loaded-names.js';
import { silentLogger } from '../../src/observability/logger.js';
import { assertSharedRedis, capturingLogger, deleteKeysUnder, keysUnder, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';

describe('loaded tools in Redis', () => {
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

  it('keeps each caller within its bound, oldest dropped first, whichever replica loads', async () => {
    const keys = clusterKeys(prefix);
    const a = redisLoadedNames(await connected(), keys, silentLogger());
    const b = redisLoadedNames(await connected(), keys, silentLogger());
    expect(await a.load('caller-1', ['x__a', 'x__b'], 3)).toEqual({ loaded: ['x__a', 'x__b'], dropped: [] });
    expect(await b.load('caller-1', ['x__b', 'x__c', 'x__d'], 3)).toEqual({ loaded: ['x__c', 'x__d'], dropped: ['x__a'] });
    expect(await a.names('caller-1')).toEqual(['x__b', 'x__c', 'x__d']);
    // Two replicas loading at once for one caller: never more than the bound.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).load('caller-1', [`y__${i}`, `z__${i}`], 3)));
    expect(await b.names('caller-1')).toHaveLength(3);
    expect(await a.names('caller-2')).toEqual([]);
    expect(await b.load('caller-2', ['x__e'], 3)).toEqual({ loaded: ['x__e'], dropped: [] });
    expect(await a.names('caller-1')).not.toContain('x__e');
    const stored = await keysUnder(SHARED_REDIS_URL, prefix);
    expect(stored.sort()).toEqual([keys.loaded('caller-1'), keys.loaded('caller-2')].sort());
    for (const key of stored) expect(await withRedis(SHARED_REDIS_URL, (c) => c.pTTL(key))).toBeGreaterThan(0);
  });

  it('lists nothing and refuses a load while Redis cannot answer, saying so once', async () => {
    const client = createClusterRedis('redis://127.0.0.1:1', true, silentLogger());
    client.on('error', () => undefined);
    clients.push(client);
    const { logger, lines } = capturingLogger();
    const store = redisLoadedNames(client, clusterKeys(prefix), logger);
    expect(await store.names('caller-1')).toEqual([]);
    await expect(store.load('caller-1', ['x__a'], 3)).rejects.toMatchObject({ code: 'CLUSTER_UNAVAILABLE', message: expect.stringContaining('call_tool') });
    await expect(store.load('caller-1', ['x__a'], 3)).rejects.toMatchObject({ code: 'CLUSTER_UNAVAILABLE' });
    expect(lines.filter((line) => String(line.msg).includes('loaded tools: redis unavailable'))).toHaveLength(1);
  });
});
