/**
 * The two scopes on their own, over a real registry of stdio fixture children. A session scope
 * lists from the primary until the session first uses a server, then has a connection (a child)
 * of its own, whose list changes reach the session's owner stream; `shared` servers go through the
 * primary; closing the scope reaps only its own children. A stateless scope leases a pooled
 * connection per call and gives it back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionScope } from '../../src/routing/scopes/scopes.js';
import { StatelessScope } from '../../src/routing/scopes/stateless-scope.js';
import type { ScopeOptions } from '../../src/routing/scopes/scope-options.js';
import type { UpstreamLink } from '../../src/upstream/link.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, recordingSink, serverConfigs } from '../upstream/fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

let registry: UpstreamRegistry;
let options: ScopeOptions;

beforeAll(async () => {
  assertBuilt();
  registry = new UpstreamRegistry({
    servers: serverConfigs({ own: stdioServer(newMarker(), { isolation: 'session' }), shared: stdioServer(newMarker(), { isolation: 'shared' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
  options = { registry, servers: ServerRoster.of(['own', 'shared']), catalogue: { separator: '__', toolFilter: () => true }, logger };
});
afterAll(() => registry.close());

const echo = (link: UpstreamLink, text: string) => link.request('tools/call', { name: 'echo', arguments: { text } }, { sink: recordingSink() });

describe('SessionScope', () => {
  it('lists from the primaries without spawning a child, and opens one on the first call', async () => {
    const quota = registry.entry('own').sessionChildren!;
    const before = quota.live;
    const scope = new SessionScope(options, { owner: recordingSink(), clientCapabilities: () => ({}) });
    try {
      const { tools } = await scope.catalogue.tools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['own__echo', 'shared__echo']));
      expect(quota.live).toBe(before);
      const used = await scope.withLink('own', async (link) => {
        await echo(link, 'mine');
        return link;
      });
      expect(used).not.toBe(registry.entry('own').primary.current);
      expect(quota.live).toBe(before + 1);
      // The same session's next call reuses its own connection.
      expect(await scope.withLink('own', async (link) => link)).toBe(used);
    } finally {
      await scope.close();
    }
    await waitUntil(() => quota.live === before, 'the session child was reaped');
  });

  it('sends a shared server’s calls through the primary', async () => {
    const scope = new SessionScope(options, { owner: recordingSink(), clientCapabilities: () => ({}) });
    try {
      expect(await scope.withLink('shared', async (link) => link)).toBe(registry.entry('shared').primary.current);
    } finally {
      await scope.close();
    }
    expect(registry.entry('shared').primary.current?.closed).toBe(false);
  });

  it('tells the session’s own stream when its own connection’s tools change, and no other session', async () => {
    const owner = recordingSink();
    const other = recordingSink();
    const scope = new SessionScope(options, { owner, clientCapabilities: () => ({}) });
    const bystander = new SessionScope(options, { owner: other, clientCapabilities: () => ({}) });
    try {
      await scope.withLink('own', (link) => link.request('tools/call', { name: 'toggle_tool', arguments: {} }, { sink: recordingSink() }));
      await waitUntil(() => owner.seen.some((m) => m.method === 'notifications/tools/list_changed'), 'list_changed reached the owner');
      expect(other.seen.filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([]);
    } finally {
      await Promise.all([scope.close(), bystander.close()]);
    }
  });
});

describe('StatelessScope', () => {
  it('leases a pooled connection for each call and gives it back afterwards', async () => {
    const stateless = new StatelessScope(options);
    const alice = stateless.forPrincipal('alice');
    const first = await alice.withLink('own', async (link) => {
      expect(link.idle).toBe(true);
      await echo(link, 'pooled');
      return link;
    });
    expect(first).not.toBe(registry.entry('own').primary.current);
    // Returned to the pool: the next call, of another principal, gets the same connection.
    expect(await stateless.forPrincipal('bob').withLink('own', async (link) => link)).toBe(first);
    // Shared servers have no pool: the primary serves.
    expect(await alice.withLink('shared', async (link) => link)).toBe(registry.entry('shared').primary.current);
  });

  it('shows every principal the one catalogue of the primaries', async () => {
    const stateless = new StatelessScope(options);
    expect(stateless.forPrincipal('alice').catalogue).toBe(stateless.forPrincipal('bob').catalogue);
    const { tools } = await stateless.catalogue.tools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['own__echo', 'shared__echo']));
  });
});
