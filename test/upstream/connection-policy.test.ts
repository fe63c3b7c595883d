/**
 * The connection policy of one server (docs/architecture.md, "The connection policy"): the
 * table of isolation × credential reach × era → which connection, checked row by row on parsed
 * configs; then, over real stdio children, that what `acquire` hands out follows the table —
 * two principals never share a connection of a `principal` server, a 2026 call of a `session`
 * server leases from the pool, a 2026 call that may create a task runs on the primary. (The one
 * retry on a fresh connection is session-lost.test.ts's.)
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { routeOf, type Caller, type Route } from '../../src/upstream/connection-policy.js';
import { connectionEra } from '../../src/upstream/connector.js';
import { connectionKeyId } from '../../src/upstream/principal-connections.js';
import { reachOf } from '../../src/upstream/registry-entry.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { REFUSING_SINK } from '../../src/rpc/sink.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { waitUntil } from '../integration/harness/wait.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, serverConfigs } from './fixture-link.js';

const HTTP = { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp' };
const EXCHANGE = {
  ...HTTP,
  isolation: 'principal',
  upstreamAuth: { kind: 'tokenExchange', tokenUrl: 'https://auth.example.com/token', clientId: 'gw', clientSecretEnv: 'GW_SECRET' },
};
const CLIENT_CREDENTIALS = { kind: 'clientCredentials', tokenUrl: 'https://auth.example.com/token', clientId: 'gw', clientSecretEnv: 'GW_SECRET' };

/** Parses one server entry under a config that satisfies its cross-field checks. */
function entryOf(server: Record<string, unknown>): { config: ServerConfig; reach: ReturnType<typeof reachOf> } {
  const config = serverConfigsWithAuth({ s: server }).s!;
  return { config, reach: reachOf(config) };
}

/** Inbound JWT auth: the token exchange needs a caller's token to exchange. */
function serverConfigsWithAuth(servers: Record<string, Record<string, unknown>>): Record<string, ServerConfig> {
  return parseConfig({ auth: { kind: 'jwt', jwks: { url: 'https://issuer.example.com/jwks' }, issuer: 'https://issuer.example.com', audience: 'https://gw.example.com/mcp' }, servers }).servers;
}

describe('the connection policy as a table', () => {
  const rows: Array<[string, Record<string, unknown>, Route, Route, Route]> = [
    // name, server entry, 2025 session's call, 2026 call, 2026 call that may create a task
    ['no isolation named (the default)', { ...HTTP }, 'principal', 'principal', 'primary'],
    ['stdio, no isolation named', { transport: 'stdio', command: 'node' }, 'principal', 'principal', 'primary'],
    ['shared', { ...HTTP, isolation: 'shared' }, 'primary', 'primary', 'primary'],
    ['principal', { ...HTTP, isolation: 'principal' }, 'principal', 'principal', 'primary'],
    ['session', { ...HTTP, isolation: 'session' }, 'own', 'pool', 'primary'],
    ['clientCredentials, shared', { ...HTTP, isolation: 'shared', upstreamAuth: CLIENT_CREDENTIALS }, 'primary', 'primary', 'primary'],
    ['clientCredentials, no isolation named', { ...HTTP, upstreamAuth: CLIENT_CREDENTIALS }, 'principal', 'principal', 'primary'],
    ['tokenExchange (principal)', EXCHANGE, 'principal', 'principal', 'primary'],
    ['perUser, no isolation named', { ...HTTP, upstreamAuth: { kind: 'perUser' } }, 'own', 'sessionOnly', 'sessionOnly'],
    ['perUser, session', { ...HTTP, isolation: 'session', upstreamAuth: { kind: 'perUser' } }, 'own', 'sessionOnly', 'sessionOnly'],
  ];
  for (const [name, server, session, request, task] of rows) {
    it(`routes ${name}: 2025 → ${session}, 2026 → ${request}, 2026 task → ${task}`, () => {
      const entry = entryOf(server);
      expect(routeOf(entry, { era: '2025' })).toBe(session);
      expect(routeOf(entry, { era: '2026' })).toBe(request);
      expect(routeOf(entry, { era: '2026', task: true })).toBe(task);
    });
  }
});

describe('the era of a principal connection', () => {
  const rows: Array<[string, Record<string, unknown>, '2025' | '2026']> = [
    // name, server entry, the era a 2026 request's principal connection speaks
    ['Streamable HTTP', { ...HTTP }, '2026'],
    ['auto', { ...HTTP, transport: 'auto' }, '2026'],
    ['tokenExchange', EXCHANGE, '2026'],
    ['stdio (opened with the 2025 handshake)', { transport: 'stdio', command: 'node' }, '2025'],
    ['HTTP+SSE (no 2026 revision)', { ...HTTP, transport: 'sse' }, '2025'],
  ];
  for (const [name, server, modern] of rows) {
    it(`keys ${name}: a 2025 session → 2025, a 2026 request → ${modern}`, () => {
      const { config } = entryOf(server);
      expect(connectionEra(config, '2025')).toBe('2025');
      expect(connectionEra(config, '2026')).toBe(modern);
      const key = { principal: 'alice', workspace: 'w' };
      // Keys of two eras are two connections; a key without an era is the 2025 one.
      expect(connectionKeyId({ ...key, era: '2026' })).not.toBe(connectionKeyId({ ...key, era: '2025' }));
      expect(connectionKeyId(key)).toBe(connectionKeyId({ ...key, era: '2025' }));
    });
  }
});

describe('ConnectionPolicy over real stdio children', () => {
  const registries: UpstreamRegistry[] = [];
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    await Promise.all(registries.splice(0).map((registry) => registry.close()));
  });

  function registry(servers: Record<string, Record<string, unknown>>): UpstreamRegistry {
    const created = new UpstreamRegistry({
      servers: serverConfigs(servers),
      statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
      maxSessionChildren: 4,
      childIdleTimeoutMs: 60_000,
      deps,
      logger,
    });
    registries.push(created);
    return created;
  }

  const caller = (principal: string, era: Caller['era'] = '2026', workspace?: string): Caller => ({ era, key: { principal, workspace } });

  it('never hands one principal’s connection of a principal server to another, in either era, nor the primary', async () => {
    const upstreams = registry({ fx: stdioServer(newMarker()) });
    await upstreams.start();
    const { policy, primary } = upstreams.entry('fx');
    const primaryLink = await primary.get();
    const alice = await policy.acquire(caller('alice'));
    const bob = await policy.acquire(caller('bob'));
    const aliceAgain = await policy.acquire(caller('alice', '2025'));
    const aliceElsewhere = await policy.acquire(caller('alice', '2026', 'other-workspace'));
    try {
      expect(alice.link).not.toBe(bob.link);
      expect(aliceAgain.link).toBe(alice.link);
      expect(aliceElsewhere.link).not.toBe(alice.link);
      for (const held of [alice, bob, aliceElsewhere]) expect(held.link).not.toBe(primaryLink);
      // Lists follow the caller's own connection once it is open, never another's.
      expect(await policy.listLink(caller('bob'))).toBe(bob.link);
      expect(await policy.listLink(caller('carol'))).toBe(primaryLink);
    } finally {
      for (const held of [alice, bob, aliceAgain, aliceElsewhere]) held.release();
    }
  });

  it('lets a caller follow its own principal connection’s list changes, never another principal’s', async () => {
    const upstreams = registry({ fx: stdioServer(newMarker()) });
    await upstreams.start();
    const { policy } = upstreams.entry('fx');
    const heard = { alice: 0, bob: 0 };
    const offs = (['alice', 'bob'] as const).map((who) =>
      policy.follow(caller(who, '2025'), (event) => {
        if (event.kind === 'listChanged') heard[who] += 1;
      }),
    );
    // Both open: neither hears the primary's changes any more, only its own connection's.
    const [alice, bob] = await Promise.all([policy.acquire(caller('alice', '2025')), policy.acquire(caller('bob', '2025'))]);
    try {
      await bob.link.request('tools/call', { name: 'toggle_tool', arguments: { enabled: true } }, { sink: REFUSING_SINK });
      await waitUntil(() => heard.bob > 0, "bob's list change");
      expect(heard).toEqual({ alice: 0, bob: 1 });
      await alice.link.request('tools/call', { name: 'toggle_tool', arguments: { enabled: true } }, { sink: REFUSING_SINK });
      await waitUntil(() => heard.alice > 0, "alice's list change");
      expect(heard).toEqual({ alice: 1, bob: 1 });
      // The open link is the caller's own, without opening one for a caller that has none.
      expect(policy.principalLink(caller('alice', '2025'))).toBe(alice.link);
      expect(policy.principalLink(caller('carol', '2025'))).toBeUndefined();
    } finally {
      alice.release();
      bob.release();
      for (const off of offs) off();
    }
  });

  it('leases a 2026 call of a session server from the pool, and runs a 2026 call that may create a task on the primary', async () => {
    const upstreams = registry({ own: stdioServer(newMarker(), { isolation: 'session' }) });
    await upstreams.start();
    const { policy, primary } = upstreams.entry('own');
    const primaryLink = await primary.get();
    const first = await policy.acquire(caller('alice'));
    const second = await policy.acquire(caller('bob'));
    try {
      // One call at a time per pooled connection: two calls at once hold two connections.
      expect(first.link).not.toBe(second.link);
      expect([first.link, second.link]).not.toContain(primaryLink);
    } finally {
      first.release();
      second.release();
    }
    const task = await policy.acquire({ ...caller('alice'), task: true });
    expect(task.link).toBe(primaryLink);
    task.release();
    // A 2025 session's call needs the session's own connection: without one, a clear error, never another connection.
    await expect(policy.acquire(caller('alice', '2025'))).rejects.toThrow(/own connection was not given/);
  });
});
