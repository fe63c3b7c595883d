/**
 * 2026-07-28 resource subscriptions through `subscriptions/listen`: a listen that names
 * `resourceSubscriptions` is subscribed upstream on the owning server's connection, hears
 * `notifications/resources/updated` for those URIs only, and the upstream subscription goes when
 * the listen's stream does. The upstream is the fixture over stdio (a 2025-era connection with
 * `resources/subscribe`): `touch_resource` announces a change to that connection's subscribers,
 * `subscribed_resources` says what that connection is subscribed to. Real child processes, bearer
 * principals, the SDK's 2026 client.
 */
import { SUBSCRIPTION_ID_META_KEY, type Client } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WATCHED_URI } from '../fixtures/fixture-resources-prompts.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  newMarker,
  startGatewayFor,
  startTestGateway,
  stdioServer,
  textOf,
  waitUntil,
  within,
} from './harness.js';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

const UPDATED = 'notifications/resources/updated';

const touch = async (client: Client) => textOf(await client.callTool({ name: 'fixture__touch_resource', arguments: { uri: WATCHED_URI } }));
const subscribedUpstream = async (client: Client) =>
  JSON.parse(textOf(await client.callTool({ name: 'fixture__subscribed_resources', arguments: {} }))) as string[];

async function listen(client: Client, filter: Parameters<Client['listen']>[0]) {
  const subscription = await within(client.listen(filter), 10_000, 'subscriptions/listen');
  cleanup.add(() => subscription.close().catch(() => undefined));
  return subscription;
}

async function principalGateway() {
  const principals = bearerPrincipals('alice', 'bob');
  const running = await startGatewayFor(cleanup, principals, { fixture: stdioServer(newMarker(), { isolation: 'principal' }) });
  return (name: string) => connectClient(cleanup, running.url, '2026', { headers: principals.headers(name) }).then((c) => c.client);
}

describe('resource subscriptions of 2026-era listens', () => {
  it("delivers a principal connection's update to that principal's listen only, never to another principal naming the same URI", async () => {
    const connect = await principalGateway();
    const [alice, bob] = await Promise.all([connect('alice'), connect('bob')]);
    const aliceUpdates = collectNotifications(alice, UPDATED);
    const bobUpdates = collectNotifications(bob, UPDATED);
    const aliceListen = await listen(alice, { resourceSubscriptions: [WATCHED_URI] });
    const bobListen = await listen(bob, { resourceSubscriptions: [WATCHED_URI] });
    expect(aliceListen.honoredFilter.resourceSubscriptions).toEqual([WATCHED_URI]);
    expect(bobListen.honoredFilter.resourceSubscriptions).toEqual([WATCHED_URI]);

    expect(await touch(alice)).toBe('notified');
    const [update] = await aliceUpdates.waitFor(1);
    expect(update?.uri).toBe(WATCHED_URI);
    expect((update?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_META_KEY]).toBeDefined();
    // Bob's own change arrives on his stream; had Alice's reached him, it would have come first.
    expect(await touch(bob)).toBe('notified');
    await bobUpdates.waitFor(1);
    expect(bobUpdates.items).toHaveLength(1);
    expect(aliceUpdates.items).toHaveLength(1);
  }, 60_000);

  it('delivers nothing to a listen that did not name the URI', async () => {
    const connect = await principalGateway();
    const alice = await connect('alice');
    const updates = collectNotifications(alice, UPDATED);
    const lists = await listen(alice, { resourcesListChanged: true });
    expect(lists.honoredFilter.resourceSubscriptions).toBeUndefined();
    // No listen of Alice's names the URI: nothing is subscribed upstream, so nothing to announce.
    expect(await touch(alice)).toBe('not subscribed');
    await listen(alice, { resourceSubscriptions: [WATCHED_URI] });
    expect(await touch(alice)).toBe('notified');
    await updates.waitFor(1);
    expect(updates.items).toHaveLength(1);
  }, 60_000);

  it('acknowledges only the URIs it subscribed upstream', async () => {
    const gateway = await startTestGateway(cleanup, { fixture: stdioServer(newMarker(), { isolation: 'shared' }) });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    const subscription = await listen(client, { resourcesListChanged: true, resourceSubscriptions: ['test://no-such-resource', WATCHED_URI] });
    expect(subscription.honoredFilter).toEqual({ resourcesListChanged: true, resourceSubscriptions: [WATCHED_URI] });
  }, 60_000);

  it('releases the upstream subscription when the listen hangs up, and keeps one while another listen holds it', async () => {
    const gateway = await startTestGateway(cleanup, { fixture: stdioServer(newMarker(), { isolation: 'shared' }) });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    const updates = collectNotifications(client, UPDATED);
    const first = await listen(client, { resourceSubscriptions: [WATCHED_URI] });
    const second = await listen(client, { resourceSubscriptions: [WATCHED_URI] });
    // A shared server: the listen's subscription lives on the primary, where this call runs too.
    expect(await subscribedUpstream(client)).toEqual([WATCHED_URI]);
    expect(await touch(client)).toBe('notified');
    await updates.waitFor(2); // one per listen stream

    await first.close();
    expect(await first.closed).toBe('local');
    expect(await subscribedUpstream(client)).toEqual([WATCHED_URI]);
    await second.close();
    await waitUntil(async () => (await subscribedUpstream(client)).length === 0, 'the upstream subscription released');
    expect(await touch(client)).toBe('not subscribed');
  }, 60_000);

  it("releases the upstream subscription on the principal's own connection when the listen hangs up", async () => {
    const connect = await principalGateway();
    const alice = await connect('alice');
    const subscription = await listen(alice, { resourceSubscriptions: [WATCHED_URI] });
    expect(await subscribedUpstream(alice)).toEqual([WATCHED_URI]);
    await subscription.close();
    await waitUntil(async () => (await subscribedUpstream(alice)).length === 0, 'the upstream subscription released');
  }, 60_000);

  it('refuses a listen naming more resources than one listen may hold', async () => {
    const gateway = await startTestGateway(cleanup, { fixture: stdioServer(newMarker(), { isolation: 'shared' }) });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    const uris = Array.from({ length: 65 }, (_, i) => `test://template/${i}/data`);
    const error = await errorOf(client.listen({ resourceSubscriptions: uris }));
    expect(error.message).toMatch(/at most 64 per listen/);
    // Nothing was subscribed upstream for the refused listen.
    expect(await subscribedUpstream(client)).toEqual([]);
  }, 60_000);
});
