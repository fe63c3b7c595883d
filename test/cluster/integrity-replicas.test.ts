/**
 * Tool integrity across replicas: two `portcullis` processes under `hold` sharing the real Redis
 * (the pin store is Redis when the event store is), each with its own child of the rug-pull
 * fixture reading one tools file. The upstream rewrites its tools while sessions are open on both:
 * the change one replica judges is pending on the other too (listed by both approvals APIs, held
 * from both replicas' sessions, which hear `list_changed`); an approval on A serves the definition
 * and lets it be called on B, and a rejection on B takes the entry off A's list and keeps the tool
 * hidden there.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  integrityDecision,
  integrityListing,
  REVIEWED,
  RUG_PULLED,
  scratchDir,
  stdioRug,
  textOf,
  toolsFile,
  waitUntil,
} from '../integration/harness.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../session/redis-helpers.js';
import { startReplica } from './replicas.js';

const cleanup = new Cleanup();
beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});
afterEach(() => cleanup.run());

describe('two replicas sharing their tool pins in Redis', () => {
  it('hold a change on both; an approval on A serves it on B, a rejection on B hides it on A', { timeout: 90_000 }, async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const dir = scratchDir(cleanup);
    const notes = stdioRug(toolsFile(dir, 'notes', REVIEWED));
    const replica = (id: string) => startReplica(cleanup, prefix, id, { servers: { notes }, toolIntegrity: { mode: 'hold' }, stateDir: join(dir, `state-${id}`) });
    const [a, b] = await Promise.all([replica('A'), replica('B')]);
    const names = async (client: Awaited<ReturnType<typeof connectClient>>['client']) => (await client.listTools()).tools.map((t) => t.name).sort();

    const { client: onA } = await connectClient(cleanup, a.url, '2026');
    const { client: onB } = await connectClient(cleanup, b.url, '2025');
    const heardOnB = collectNotifications(onB, 'notifications/tools/list_changed');
    expect(await names(onA)).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    expect(await names(onB)).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);

    // The upstream rewrites its tools through A; A judges its next listing.
    expect(textOf(await onA.callTool({ name: 'notes__publish', arguments: { tools: RUG_PULLED } }))).toBe('published 3');
    expect(await names(onA)).toEqual(['notes__publish', 'notes__read_note']);
    // B hears of the stored change (its own child said nothing) and holds the same definitions.
    await heardOnB.waitFor(1, 15_000);
    expect(await names(onB)).toEqual(['notes__publish', 'notes__read_note']);
    const refusedOnB = await errorOf(onB.callTool({ name: 'notes__add_note', arguments: {} }));
    expect(refusedOnB.data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL', tool: 'notes__add_note' });
    const listedOnA = await integrityListing(a.url);
    const listedOnB = await integrityListing(b.url);
    expect(listedOnB.body.pending).toEqual(listedOnA.body.pending);
    const changed = listedOnA.body.pending!.find((p) => p.tool === 'add_note')!;
    const added = listedOnA.body.pending!.find((p) => p.tool === 'sync_notes')!;
    expect([changed.change, added.change]).toEqual(['changed', 'new']);

    // Approved on A: B's session hears it, lists the definition and calls it.
    expect((await integrityDecision(a.url, 'approve', { id: changed.id, hash: changed.hash })).status).toBe(200);
    await heardOnB.waitFor(2, 15_000);
    expect(await names(onB)).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    expect(textOf(await onB.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');
    expect(textOf(await onA.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');

    // Rejected on B: off A's list, and still hidden and refused on A.
    expect((await integrityDecision(b.url, 'reject', { id: added.id, hash: added.hash })).status).toBe(200);
    await waitUntil(async () => (await integrityListing(a.url)).body.pending?.length === 0, "the rejection reaching A's list", 15_000);
    expect(await names(onA)).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    expect((await errorOf(onA.callTool({ name: 'notes__sync_notes', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL', tool: 'notes__sync_notes' });
    // Deciding it again on A: nothing left to decide there either.
    expect((await integrityDecision(a.url, 'approve', { id: added.id })).status).toBe(404);
  });
});
