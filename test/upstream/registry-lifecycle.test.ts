/**
 * Stopping and starting one server of a registry at run time (`stopServer`, `startServer`), over
 * real stdio children: every connection of the server closes and its children exit, no new one
 * opens while stopped — not even one that was already being opened —, the other servers are not
 * touched, and a start brings the primary back. Adding a server (`addServer`, a reload's): built
 * as at start, followed before it connects, in the roster once up; a removed one named again
 * comes back on its old entry, never under another transport.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { ServerConfig } from '../../src/config/schema.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { processesWithMarker } from '../integration/harness/processes.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, serverConfigs } from './fixture-link.js';

const registries: UpstreamRegistry[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.close()));
});

/** Servers the registry said were stopped (their upstream tokens are dropped then), in order. */
const stoppedTold: string[] = [];

function registry(servers: Record<string, ServerConfig>): UpstreamRegistry {
  const created = new UpstreamRegistry({
    onServerStopped: (server) => void stoppedTold.push(server),
    servers,
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    childIdleTimeoutMs: 60_000,
    deps,
    logger,
  });
  registries.push(created);
  return created;
}

describe('UpstreamRegistry.stopServer / startServer', () => {
  it('closes every connection of one server, refuses new ones, and starts it again', async () => {
    const [fx, other] = [newMarker(), newMarker()];
    const upstreams = registry(serverConfigs({ fx: stdioServer(fx, { isolation: 'session' }), other: stdioServer(other) }));
    await upstreams.start();
    const own = await upstreams.connect('fx'); // a session's own connection
    const lease = await upstreams.lease('fx'); // a pooled one, held
    expect(processesWithMarker(fx).length).toBe(3);

    stoppedTold.length = 0;
    await upstreams.stopServer('fx');
    expect(processesWithMarker(fx)).toEqual([]);
    expect(own.closed).toBe(true);
    // Told once its connections are closed, so none of them asks for a token it forgot.
    expect(stoppedTold).toEqual(['fx']);
    expect(lease.link.closed).toBe(true);
    lease.release();
    expect(upstreams.isStopped('fx')).toBe(true);
    expect(upstreams.entry('fx').primary.state).toBe('closed');
    // Stopped on purpose: not waited for.
    expect(upstreams.ready()).toBe(true);
    const refused = await upstreams.connect('fx').catch((e: unknown) => e as GatewayError);
    expect(refused).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect((await upstreams.lease('fx').catch((e: unknown) => e as GatewayError)).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(upstreams.entry('other').primary.state).toBe('ready');
    expect(processesWithMarker(other).length).toBe(1);
    await upstreams.stopServer('fx'); // idempotent
    expect(stoppedTold).toEqual(['fx']);

    await upstreams.startServer('fx');
    expect(upstreams.isStopped('fx')).toBe(false);
    await upstreams.entry('fx').primary.get();
    expect(upstreams.entry('fx').primary.state).toBe('ready');
    const again = await upstreams.lease('fx');
    expect(again.link.closed).toBe(false);
    again.release();
  });

  it('leaves no connection alive that was still opening when the server stopped', async () => {
    const fx = newMarker();
    const upstreams = registry(serverConfigs({ fx: stdioServer(fx) }));
    await upstreams.start();
    // Whichever finishes first, the stop wins: the connection is refused, or closed by the stop.
    const opening = upstreams.connect('fx').then(
      (link) => link,
      (e: unknown) => (e as GatewayError).code,
    );
    await upstreams.stopServer('fx');
    const outcome = await opening;
    if (typeof outcome === 'string') expect(outcome).toBe('UPSTREAM_UNAVAILABLE');
    else expect(outcome.closed).toBe(true);
    expect(processesWithMarker(fx)).toEqual([]);
  });

  it('a restart of a stopped server takes the new entry and starts nothing until startServer', async () => {
    const [before, after] = [newMarker(), newMarker()];
    const upstreams = registry(serverConfigs({ fx: stdioServer(before) }));
    await upstreams.start();
    await upstreams.stopServer('fx');

    await upstreams.restart('fx', serverConfigs({ fx: stdioServer(after) }).fx!);
    expect(upstreams.isStopped('fx')).toBe(true);
    expect(upstreams.entry('fx').primary.state).toBe('closed');
    expect(processesWithMarker(before)).toEqual([]);
    expect(processesWithMarker(after)).toEqual([]);
    expect((await upstreams.lease('fx').catch((e: unknown) => e as GatewayError)).code).toBe('UPSTREAM_UNAVAILABLE');

    await upstreams.startServer('fx');
    await upstreams.entry('fx').primary.get();
    const lease = await upstreams.lease('fx');
    lease.release();
    expect(processesWithMarker(before)).toEqual([]);
    expect(processesWithMarker(after).length).toBeGreaterThanOrEqual(1);
  });
});

describe('UpstreamRegistry.addServer', () => {
  it('builds the new entry as at start, tells its followers before it connects, and lists it once its primary is up', async () => {
    const [fx, added] = [newMarker(), newMarker()];
    const upstreams = registry(serverConfigs({ fx: stdioServer(fx) }));
    await upstreams.start();
    const seen: string[] = [];
    upstreams.onServerAdded((entry) => seen.push(`${entry.name}:${entry.primary.state}`));
    const joined: string[] = [];
    upstreams.roster.onAdded((server) => joined.push(`${server}:${upstreams.entry(server).primary.state}`));
    const config = serverConfigs({ added: stdioServer(added) }).added!;

    const adding = upstreams.addServer('added', config);
    expect(upstreams.entry('added').config).toBe(config); // found at once, before it is up
    expect(upstreams.roster.names).toEqual(['fx']);
    await adding;
    expect(seen).toEqual(['added:idle']);
    expect(joined).toEqual(['added:ready']);
    expect(upstreams.roster.names).toEqual(['fx', 'added']);
    expect(processesWithMarker(added).length).toBe(1);
    expect(upstreams.status().map((s) => s.server)).toEqual(['fx', 'added']);
    const refused = await upstreams.addServer('added', config).catch((e: unknown) => e as GatewayError);
    expect(refused).toMatchObject({ code: 'NOT_SUPPORTED' });
  });

  it('adds a server the global decisions disable stopped, spawning nothing', async () => {
    const added = newMarker();
    const upstreams = registry({});
    await upstreams.addServer('added', serverConfigs({ added: stdioServer(added) }).added!, { stopped: true });
    expect(upstreams.roster.names).toEqual(['added']);
    expect(upstreams.isStopped('added')).toBe(true);
    expect(upstreams.entry('added').primary.state).toBe('closed');
    expect(processesWithMarker(added)).toEqual([]);
  });

  it('brings a removed server back on its old entry under the new config, refusing another transport', async () => {
    const fx = newMarker();
    const upstreams = registry(serverConfigs({ fx: stdioServer(fx) }));
    await upstreams.start();
    const entry = upstreams.entry('fx');
    await upstreams.removeServer('fx');
    expect(processesWithMarker(fx)).toEqual([]);
    const http = serverConfigs({ fx: { transport: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: true } }).fx!;
    expect(await upstreams.addServer('fx', http).catch((e: unknown) => e as GatewayError)).toMatchObject({ code: 'NOT_SUPPORTED' });
    expect(upstreams.isRemoved('fx')).toBe(true);

    const again = serverConfigs({ fx: stdioServer(fx, { mode: 'optional' }) }).fx!;
    await upstreams.addServer('fx', again);
    expect(upstreams.entry('fx')).toBe(entry);
    expect(upstreams.entry('fx').config).toBe(again);
    expect(upstreams.isRemoved('fx')).toBe(false);
    expect(upstreams.entry('fx').primary.state).toBe('ready');
    expect(processesWithMarker(fx).length).toBe(1);
    expect(upstreams.status().map((s) => s.server)).toEqual(['fx']);
  });
});
