/**
 * UpstreamRegistry on its own, over real stdio children: start-up of required and optional
 * servers (a failure names the server, never its command), readiness and status, what `lease`
 * and `connect` hand out per isolation mode, and close.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { ServerConfig } from '../../src/config/schema.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, recordingSink, serverConfigs } from './fixture-link.js';

const registries: UpstreamRegistry[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await Promise.all(registries.splice(0).map((registry) => registry.close()));
});

const FAILING_SCRIPT = 'process.exit(3) // secret-looking-command-text';
const failing = (extra: Record<string, unknown> = {}) => ({ transport: 'stdio', command: process.execPath, args: ['-e', FAILING_SCRIPT], ...extra });

function registry(servers: Record<string, ServerConfig>): UpstreamRegistry {
  const created = new UpstreamRegistry({
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

describe('UpstreamRegistry', () => {
  it('starts every primary and reports the required servers ready', async () => {
    const upstreams = registry(serverConfigs({ b: stdioServer(newMarker()), a: stdioServer(newMarker(), { isolation: 'shared' }) }));
    expect(upstreams.ready()).toBe(false);
    await upstreams.start();
    expect(upstreams.ready()).toBe(true);
    // Entries are kept in name order, whatever order the config listed them in.
    expect(upstreams.status()).toEqual([
      { server: 'a', mode: 'required', state: 'ready' },
      { server: 'b', mode: 'required', state: 'ready' },
    ]);
  });

  it('refuses to start when a required server cannot, naming the server and not its command', async () => {
    const upstreams = registry(serverConfigs({ fx: stdioServer(newMarker()), broken: failing() }));
    const error = await upstreams.start().catch((e: unknown) => e as GatewayError);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.code).toBe('UPSTREAM_START_FAILED');
    expect(error.message).toMatch(/broken/);
    expect(error.message).not.toMatch(/secret-looking-command-text|process\.exit/);
    expect(upstreams.ready()).toBe(false);
  });

  it('starts without an optional server that fails, showing it in state error', async () => {
    const upstreams = registry(serverConfigs({ fx: stdioServer(newMarker()), extra: failing({ mode: 'optional' }) }));
    await upstreams.start();
    expect(upstreams.ready()).toBe(true);
    // It is retried in the background (connecting, then error again): wait for an error state.
    await waitUntil(
      () => upstreams.status().some((s) => s.server === 'extra' && s.mode === 'optional' && s.state === 'error'),
      'the optional server in state error',
      10_000,
    );
  });

  it('leases the primary of a shared server, and a pooled connection of its own for session isolation', async () => {
    const upstreams = registry(serverConfigs({ shared: stdioServer(newMarker(), { isolation: 'shared' }), own: stdioServer(newMarker(), { isolation: 'session' }) }));
    await upstreams.start();
    const shared = await upstreams.lease('shared');
    expect(shared.link).toBe(upstreams.entry('shared').primary.current);
    shared.release();
    const pooled = await upstreams.lease('own', 'alice');
    expect(pooled.link).not.toBe(upstreams.entry('own').primary.current);
    const answer = await pooled.link.request('tools/call', { name: 'echo', arguments: { text: 'pooled' } }, { sink: recordingSink() });
    expect(answer).toMatchObject({ content: [{ text: 'pooled' }] });
    pooled.release();
    // Released and idle: the next lease gets the same connection back.
    const again = await upstreams.lease('own', 'bob');
    expect(again.link).toBe(pooled.link);
    again.release();
  });

  it('opens a fresh connection per connect, and bounds only session children of stdio servers', async () => {
    const upstreams = registry(serverConfigs({ own: stdioServer(newMarker(), { isolation: 'session' }), shared: stdioServer(newMarker(), { isolation: 'shared' }) }));
    const first = await upstreams.connect('own');
    const second = await upstreams.connect('own', { era: '2025', owner: recordingSink() });
    try {
      expect(first).not.toBe(second);
      expect(first.closed || second.closed).toBe(false);
      expect(upstreams.entry('own').sessionChildren).toBeDefined();
      expect(upstreams.entry('shared').sessionChildren).toBeUndefined();
      expect(upstreams.entry('shared').pool).toBeUndefined();
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('answers an unknown server name with UNKNOWN_SERVER', () => {
    const upstreams = registry(serverConfigs({ fx: stdioServer(newMarker()) }));
    expect(() => upstreams.entry('nope')).toThrow(expect.objectContaining({ code: 'UNKNOWN_SERVER' }));
  });

  it('closes every primary and pooled connection on close', async () => {
    const upstreams = registry(serverConfigs({ own: stdioServer(newMarker(), { isolation: 'session' }) }));
    await upstreams.start();
    const primary = upstreams.entry('own').primary.current!;
    const lease = await upstreams.lease('own');
    lease.release();
    await upstreams.close();
    expect(primary.closed).toBe(true);
    expect(lease.link.closed).toBe(true);
    expect(upstreams.status()).toEqual([{ server: 'own', mode: 'required', state: 'closed' }]);
  });
});
