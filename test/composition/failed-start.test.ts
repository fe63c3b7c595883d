/**
 * A start that fails part way closes everything it opened (gateway.ts, composition/closers.ts):
 * real gateways in this process on 127.0.0.1, the suite's Redis as the event store, the compiled
 * fixture server over stdio. What is checked is what the operating system sees: the listening
 * port free again, the Redis connection and every socket gone, no child left running.
 */
import { createServer, type Server } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { processesWithMarker } from '../integration/harness/processes.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, freePort, SHARED_REDIS_URL, uniquePrefix } from '../session/redis-helpers.js';

const cleanup = new Cleanup();
beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
  // The check's own connection to Redis is gone before any baseline is taken.
  await waitUntil(() => !handles().has('TCPSocketWrap'), 'the Redis check has disconnected');
});
afterEach(() => cleanup.run());

const TOKEN = `token-${randomUUID()}`;

/** How many sockets, listeners and child processes of each kind this process holds right now. */
function handles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) if (/TCP|Pipe|Process/.test(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** No kind held more often than in `baseline` (handles of earlier tests may still be going). */
function noMoreThan(baseline: Map<string, number>): boolean {
  for (const [kind, count] of handles()) if (count > (baseline.get(kind) ?? 0)) return false;
  return true;
}

function config(port: number, servers: Record<string, unknown>) {
  return parseConfig(
    {
      listen: { host: '127.0.0.1', port },
      auth: { kind: 'bearer', tokens: [{ principal: 'alice', env: 'FAILED_START_TOKEN' }] },
      eventStore: { kind: 'redis', url: SHARED_REDIS_URL, allowPrivateNetwork: true, keyPrefix: uniquePrefix() },
      servers,
    },
    { baseDir: process.cwd() },
  );
}

function start(port: number, servers: Record<string, unknown>) {
  return startGateway({ config: config(port, servers), logger: silentLogger(), env: { FAILED_START_TOKEN: TOKEN } });
}

async function taken(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

async function canListenOn(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

describe('a start that fails part way', () => {
  it('on a port in use, fails before anything else opens: no child spawned, no Redis connection left', async () => {
    const baseline = handles();
    const marker = newMarker();
    const port = await taken();
    const withTaken = handles();
    await expect(within(start(port, { fx: stdioServer(marker) }), 30_000, 'the failed start')).rejects.toThrow(/EADDRINUSE/);
    expect(processesWithMarker(marker)).toEqual([]);
    await waitUntil(() => noMoreThan(withTaken), 'every socket the start opened is closed');
    expect(withTaken.get('TCPServerWrap') ?? 0).toBeGreaterThan(baseline.get('TCPServerWrap') ?? 0);
  });

  it('when a required server fails after the listener, registry and store opened, frees the port and reaps every child', async () => {
    const baseline = handles();
    const marker = newMarker();
    const port = await freePort();
    const ghost = { transport: 'stdio', command: `portcullis-not-installed-${randomUUID()}` };
    await expect(within(start(port, { fx: stdioServer(marker), ghost }), 30_000, 'the failed start')).rejects.toThrow(/ghost/);
    await waitUntil(() => processesWithMarker(marker).length === 0, 'the healthy server’s child is reaped');
    expect(await canListenOn(port)).toBe(true);
    await waitUntil(() => noMoreThan(baseline), 'every socket and child handle the start opened is closed');
  });

  it('leaves nothing open after a start that succeeded and was closed', async () => {
    const baseline = handles();
    const marker = newMarker();
    const port = await freePort();
    const running = await within(start(port, { fx: stdioServer(marker) }), 30_000, 'the start');
    expect(processesWithMarker(marker).length).toBeGreaterThan(0);
    await within(running.close(), 15_000, 'the close');
    await waitUntil(() => processesWithMarker(marker).length === 0, 'the child is reaped');
    expect(await canListenOn(port)).toBe(true);
    await waitUntil(() => noMoreThan(baseline), 'every socket and child handle is closed');
  });
});
