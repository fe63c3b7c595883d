/**
 * The gateway's Redis connections obey the egress rules: a loopback or private Redis needs
 * `eventStore.allowPrivateNetwork`, decided on the address actually dialled. A plain TCP listener
 * on 127.0.0.1 stands in for a Redis the policy does not allow and counts every connection it
 * gets (none may arrive); the allowed case runs against the suite's own redis-server.
 */
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { createRedisEventStore } from '../../src/session/redis-event-store.js';
import { waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, capturingLogger, SHARED_REDIS_URL, uniquePrefix } from './redis-helpers.js';

let decoy: net.Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  await assertSharedRedis();
  decoy = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  decoy.listen(0, '127.0.0.1');
  await once(decoy, 'listening');
  port = (decoy.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => decoy.close(() => resolve())));
beforeEach(() => (connections = 0));

const base = { limit: 10, historyTtlMs: 60_000, keyPrefix: uniquePrefix() };

describe('the redis event store under the egress rules', () => {
  it('refuses a loopback literal without allowPrivateNetwork when built, naming the field, never the address', () => {
    let error: unknown;
    try {
      createRedisEventStore({ ...base, url: `redis://127.0.0.1:${port}`, allowPrivateNetwork: false, logger: silentLogger() });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'UPSTREAM_BLOCKED', message: expect.stringMatching(/^eventStore\.url: connection to a loopback address refused/) });
    expect((error as Error).message).not.toContain(String(port));
    expect(connections).toBe(0);
  });

  it('never connects to a loopback name without allowPrivateNetwork, and logs the refusal by class', async () => {
    const { logger, lines } = capturingLogger();
    const store = createRedisEventStore({ ...base, url: `redis://localhost:${port}`, allowPrivateNetwork: false, logger });
    try {
      await within(store.start(), 10_000, 'store start');
      await waitUntil(() => lines.find((line) => line.msg === 'redis event store unavailable; streams continue without resumability'), 'the outage line');
      expect(lines).toContainEqual(expect.objectContaining({ level: 40, server: 'eventStore.url', code: 'UPSTREAM_BLOCKED', range: 'localhostName' }));
      expect(lines).toContainEqual(expect.objectContaining({ err: 'UPSTREAM_BLOCKED' }));
      expect(connections).toBe(0);
      expect(JSON.stringify(lines)).not.toContain(String(port));
    } finally {
      await store.close();
    }
  });

  it('serves from a loopback Redis once the field opts in', async () => {
    const store = createRedisEventStore({ ...base, url: SHARED_REDIS_URL, allowPrivateNetwork: true, logger: silentLogger() });
    try {
      await within(store.start(), 10_000, 'store start');
      const session = store.forSession('egress-allowed');
      await session.storeEvent('stream-1', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 1 } });
      await session.forget();
    } finally {
      await store.close();
    }
  });
});

describe('a gateway whose eventStore.url names a loopback Redis without the opt-in', () => {
  it('does not start, and says which field to change', async () => {
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: {}, eventStore: { kind: 'redis', url: `redis://127.0.0.1:${port}` } });
    await expect(startGateway({ config, logger: silentLogger(), env: {} })).rejects.toThrow(/^eventStore\.url: connection to a loopback address refused \(allowPrivateNetwork is false\)/);
    expect(connections).toBe(0);
  });
});
