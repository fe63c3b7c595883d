/**
 * `ResourceListens` on its own, over a real registry of stdio fixture children: one upstream
 * subscription per URI and connection whatever the number of listens holding it, released with the
 * last; the per-listen and gateway-wide bounds refuse before anything is subscribed upstream, and
 * a refused or released listen gives its places back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { ResourceListens } from '../../src/routing/listens/resource-listens.js';
import { StatelessScope } from '../../src/routing/scopes/stateless-scope.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { WATCHED_URI } from '../fixtures/fixture-resources-prompts.js';
import { assertBuilt, newMarker, ROOT } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, recordingSink, serverConfigs } from '../upstream/fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

let registry: UpstreamRegistry;
let scope: StatelessScope;
let dir: string;
/** A book server: its one resource exists, but it does not declare `resources.subscribe`. */
const BOOK_URI = 'book://entry/1';
const anonymous = { principal: undefined, workspace: undefined };

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-listens-'));
  writeFileSync(join(dir, 'book.json'), JSON.stringify(['first']));
  const book = { transport: 'stdio', command: process.execPath, args: [`${ROOT}dist/test/fixtures/shared-book-server.js`, '--store', join(dir, 'book.json')], isolation: 'shared' };
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: stdioServer(newMarker(), { isolation: 'shared' }), book }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
  scope = new StatelessScope({ registry, servers: ServerRoster.of(['fx', 'book']), catalogue: { separator: '__', toolFilter: () => true }, logger });
});
afterAll(async () => {
  await registry.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the primary's upstream says it is subscribed to. */
async function subscribedUpstream(): Promise<string[]> {
  const link = await registry.entry('fx').primary.get();
  const result = await link.request('tools/call', { name: 'subscribed_resources', arguments: {} }, { sink: recordingSink() });
  const [block] = result.content as Array<{ text: string }>;
  return JSON.parse(block?.text ?? '[]') as string[];
}

const listens = (bounds: { maxPerListen?: number; maxTotal?: number; maxPerPrincipal?: number } = {}) =>
  new ResourceListens({ registry, servers: ServerRoster.of(['fx', 'book']), logger, ...bounds });

describe('ResourceListens', () => {
  it('subscribes a URI upstream once for every listen holding it, and unsubscribes with the last', async () => {
    const subject = listens();
    try {
      const [a, b] = await Promise.all([subject.open(anonymous, scope.catalogue, [WATCHED_URI]), subject.open(anonymous, scope.catalogue, [WATCHED_URI, WATCHED_URI])]);
      expect(a.uris).toEqual([WATCHED_URI]);
      expect(b.uris).toEqual([WATCHED_URI]);
      expect(subject.size).toBe(2);
      expect(await subscribedUpstream()).toEqual([WATCHED_URI]);
      a.release();
      a.release(); // idempotent: the other listen keeps its hold
      expect(await subscribedUpstream()).toEqual([WATCHED_URI]);
      b.release();
      expect(subject.size).toBe(0);
      await waitUntil(async () => (await subscribedUpstream()).length === 0, 'the upstream unsubscribe');
    } finally {
      subject.close();
    }
  });

  it('delivers an update to every attached listen holding the URI, and none after release', async () => {
    const subject = listens();
    try {
      const grant = await subject.open(anonymous, scope.catalogue, [WATCHED_URI]);
      const seen: string[] = [];
      grant.attach((uri) => seen.push(uri));
      const link = await registry.entry('fx').primary.get();
      await link.request('tools/call', { name: 'touch_resource', arguments: { uri: WATCHED_URI } }, { sink: recordingSink() });
      await waitUntil(() => seen.length === 1, 'the update');
      grant.release();
      expect(seen).toEqual([WATCHED_URI]);
    } finally {
      subject.close();
    }
  });

  it('honours only URIs whose owner takes subscriptions, and counts only those', async () => {
    const subject = listens({ maxTotal: 3 });
    try {
      const grant = await subject.open(anonymous, scope.catalogue, ['test://nobody-owns-this', BOOK_URI, WATCHED_URI]);
      expect(grant.uris).toEqual([WATCHED_URI]);
      expect(subject.size).toBe(1);
      // The places of the URIs left out came back: two more fit.
      const more = await subject.open(anonymous, scope.catalogue, [WATCHED_URI, 'test://static-text']);
      expect(subject.size).toBe(3);
      more.release();
      grant.release();
      expect(subject.size).toBe(0);
    } finally {
      subject.close();
    }
  });

  it('refuses a listen over the per-listen bound and one past the gateway-wide budget, subscribing nothing', async () => {
    const subject = listens({ maxPerListen: 2, maxTotal: 3 });
    try {
      const tooMany = await subject.open(anonymous, scope.catalogue, ['a://1', 'a://2', 'a://3']).catch((e: unknown) => e);
      expect(tooMany).toBeInstanceOf(GatewayError);
      expect((tooMany as GatewayError).code).toBe('INVALID_PARAMS');
      const held = await subject.open(anonymous, scope.catalogue, [WATCHED_URI, 'test://static-text']);
      expect(subject.size).toBe(2);
      const overBudget = await subject.open(anonymous, scope.catalogue, [WATCHED_URI, 'test://static-binary']).catch((e: unknown) => e);
      expect((overBudget as GatewayError).code).toBe('SUBSCRIPTION_LIMIT');
      expect(subject.size).toBe(2);
      held.release();
      expect(subject.size).toBe(0);
      // The places came back: the same listen fits now.
      const again = await subject.open(anonymous, scope.catalogue, [WATCHED_URI, 'test://static-binary']);
      expect(again.uris).toEqual([WATCHED_URI, 'test://static-binary']);
      again.release();
      await waitUntil(async () => (await subscribedUpstream()).length === 0, 'the upstream unsubscribes');
    } finally {
      subject.close();
    }
  });

  it("keeps one principal within its share of the budget, so another principal still subscribes when it is full", async () => {
    // Default share: half of maxTotal.
    const subject = listens({ maxTotal: 4 });
    const alice = { principal: 'alice', workspace: undefined };
    const bob = { principal: 'bob', workspace: undefined };
    try {
      const held = await subject.open(alice, scope.catalogue, [WATCHED_URI, 'test://static-text']);
      expect(subject.heldBy('alice')).toBe(2);
      const refused = await subject.open(alice, scope.catalogue, ['test://static-binary']).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GatewayError);
      expect((refused as GatewayError).code).toBe('SUBSCRIPTION_LIMIT');
      expect((refused as GatewayError).data).toMatchObject({ limit: { scope: 'principal', counts: 'resourceSubscriptions', max: 2 } });
      expect((refused as GatewayError).message).toContain('this principal holds');
      expect(subject.heldBy('alice')).toBe(2);
      // Alice at her share leaves bob his.
      const bobs = await subject.open(bob, scope.catalogue, [WATCHED_URI, 'test://static-binary']);
      expect(bobs.uris).toEqual([WATCHED_URI, 'test://static-binary']);
      // The gateway's budget is full now: its own bound answers, naming the gateway.
      const full = await subject.open(anonymous, scope.catalogue, [WATCHED_URI]).catch((e: unknown) => e);
      expect((full as GatewayError).data).toMatchObject({ limit: { scope: 'gateway', max: 4 } });
      held.release();
      expect(subject.heldBy('alice')).toBe(0);
      const again = await subject.open(alice, scope.catalogue, ['test://static-binary']);
      expect(again.uris).toEqual(['test://static-binary']);
      again.release();
      bobs.release();
      expect(subject.size).toBe(0);
      await waitUntil(async () => (await subscribedUpstream()).length === 0, 'the upstream unsubscribes');
    } finally {
      subject.close();
    }
  });
});
