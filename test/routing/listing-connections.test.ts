/**
 * The capability sets 2026 lists are keyed by (pure), and the list-only connections behind them
 * over a real registry of stdio fixture children: one per server and set, bounded in sets, none
 * for a set-less request, a non-`session` server or after close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListingConnections, listingSet } from '../../src/routing/scopes/listing-connections.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';

describe('listingSet', () => {
  it.each([
    ['nothing declared', undefined, undefined],
    ['an empty declaration', {}, undefined],
    ['only what a pooled connection cannot honour', { experimental: { x: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } }, undefined],
    ['sampling, without its sub-features', { sampling: { tools: {}, context: {} } }, { key: 'sampling', capabilities: { sampling: {} } }],
    ['roots, without listChanged', { roots: { listChanged: true } }, { key: 'roots', capabilities: { roots: {} } }],
    ['2025-06 elicitation `{}` as form mode', { elicitation: {} }, { key: 'elicitation.form', capabilities: { elicitation: { form: {} } } }],
    ['url-mode elicitation only', { elicitation: { url: {} } }, { key: 'elicitation.url', capabilities: { elicitation: { url: {} } } }],
    [
      'everything, in a canonical order',
      { sampling: {}, roots: {}, elicitation: { url: {}, form: {} } },
      { key: 'elicitation.form,elicitation.url,roots,sampling', capabilities: { elicitation: { form: {}, url: {} }, roots: {}, sampling: {} } },
    ],
  ])('%s', (_name, declared, expected) => {
    expect(listingSet(declared as never)).toEqual(expected);
  });
});

describe('ListingConnections', () => {
  let registry: UpstreamRegistry;
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
  });
  afterAll(() => registry.close());

  it('opens one connection per set, reuses it, keeps at most maxSets, and none for the primary’s cases', async () => {
    const listings = new ListingConnections({ registry, logger, maxSets: 2 });
    try {
      const sampling = listingSet({ sampling: {} });
      expect(listings.linkFor('own', undefined)).toBeUndefined();
      expect(listings.linkFor('shared', sampling)).toBeUndefined();
      const first = await listings.linkFor('own', sampling);
      expect(first).not.toBe(registry.entry('own').primary.current);
      expect(await listings.linkFor('own', listingSet({ sampling: { tools: {} } }))).toBe(first);
      await listings.linkFor('own', listingSet({ roots: {} }));
      await listings.linkFor('own', listingSet({ elicitation: {} }));
      // The third set pushed out the least recently used one, whose connection was closed.
      expect(listings.size).toBe(2);
      expect(first?.closed).toBe(true);
    } finally {
      await listings.close();
    }
    expect(listings.size).toBe(0);
  });
});
