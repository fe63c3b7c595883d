/**
 * What only the Redis store does: keys under a prefix with a TTL, and living through Redis going
 * away. The outage test runs its own redis-server on a free port; the shared one is never stopped.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/observability/logger.js';
import { createEventStore, type GatewayEventStore } from '../../src/session/event-store.js';
import { createRedisEventStore } from '../../src/session/redis-event-store.js';
import { waitUntil, within } from '../integration/harness/wait.js';
import {
  assertSharedRedis,
  capturingLogger,
  deleteKeysUnder,
  keysUnder,
  privateRedis,
  SHARED_REDIS_URL,
  uniquePrefix,
  withRedis,
  type PrivateRedis,
} from './redis-helpers.js';

const prefix = uniquePrefix();
const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } });
const open: GatewayEventStore[] = [];
const servers: PrivateRedis[] = [];

beforeAll(async () => {
  await assertSharedRedis();
});

afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  for (const server of servers.splice(0)) await server.stop();
});

afterAll(async () => {
  await deleteKeysUnder(SHARED_REDIS_URL, prefix);
});

describe('the redis event store', () => {
  it('keeps a session’s history in one key under its prefix, with a TTL, deleted when the session goes', async () => {
    const store = createRedisEventStore({ url: SHARED_REDIS_URL, limit: 10, historyTtlMs: 60_000, keyPrefix: prefix, allowPrivateNetwork: true, logger: silentLogger() });
    open.push(store);
    await store.start();
    const session = store.forSession('ttl-session');
    for (let i = 0; i < 3; i += 1) await session.storeEvent(i === 0 ? 'a' : 'b', note(i));
    expect(await session.retained()).toBe(3);
    expect(await keysUnder(SHARED_REDIS_URL, prefix)).toEqual([`${prefix}ttl-session`]);
    const ttl = await withRedis(SHARED_REDIS_URL, (client) => client.pTTL(`${prefix}ttl-session`));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await session.forget();
    expect(await keysUnder(SHARED_REDIS_URL, prefix)).toEqual([]);
  });

  it('refuses options it cannot use when built', async () => {
    const base = { limit: 10, historyTtlMs: 1000, logger: silentLogger() };
    expect(() => createRedisEventStore({ ...base, url: 'http://127.0.0.1:6379' })).toThrow(TypeError);
    expect(() => createRedisEventStore({ ...base, url: 'not a url' })).toThrow(TypeError);
    expect(() => createRedisEventStore({ ...base, url: SHARED_REDIS_URL, limit: 0 })).toThrow(TypeError);
    const deps = { logger: silentLogger(), maxSessions: 1, historyTtlMs: 1000 };
    await expect(createEventStore({ kind: 'redis', limit: 10 }, deps)).rejects.toThrow(/url is required/);
  });

  it('keeps storing without blocking while Redis is down, logs the outage once, and resumes when Redis is back', async () => {
    const redis = await privateRedis();
    servers.push(redis);
    const { logger, lines } = capturingLogger();
    const store = createRedisEventStore({ url: redis.url, limit: 1000, historyTtlMs: 60_000, allowPrivateNetwork: true, logger });
    open.push(store);
    await store.start();
    const session = store.forSession('outage');
    const before = await session.storeEvent('a', note(0));
    await session.storeEvent('a', note(1));
    expect((await session.resumePoint(before)).ok).toBe(true);

    await redis.stop();
    // Every write during the outage returns an id at once (the live stream goes on).
    const during: string[] = [];
    for (let i = 2; i < 52; i += 1) during.push(await within(session.storeEvent('a', note(i)), 1_000, 'storeEvent while Redis is down'));
    expect(new Set(during).size).toBe(50);
    expect(await within(session.resumePoint(during.at(-1)!), 5_000, 'resumePoint while Redis is down')).toMatchObject({
      ok: false,
      code: 'unavailable',
    });
    const outages = () => lines.filter((line) => String(line.msg).includes('unavailable'));
    await waitUntil(() => outages().length > 0, 'the outage log line');

    await redis.start();
    // Resumability returns: an event stored after reconnecting can be resumed from.
    const after = await waitUntil(
      async () => {
        const id = await session.storeEvent('a', note(99));
        await session.storeEvent('a', note(100));
        const point = await session.resumePoint(id);
        return point.ok ? id : undefined;
      },
      'resumability after Redis restarted',
      15_000,
      100,
    );
    const replayed: unknown[] = [];
    await session.replayEventsAfter(after, {
      send: async (_, message) => void replayed.push((message as { params?: { data?: unknown } }).params?.data),
    });
    expect(replayed).toEqual([100]);
    // The restart lost the earlier events: resuming from before it is refused, never a silent gap.
    expect(await session.resumePoint(before)).toMatchObject({ ok: false, code: 'evicted' });
    expect(outages()).toHaveLength(1);
    expect(lines.some((line) => String(line.msg).includes('restored'))).toBe(true);
    // The outage line names no address (the URL may carry a password).
    expect(JSON.stringify(outages())).not.toContain('127.0.0.1');
  });
});
