/**
 * UpstreamSlot on its own, over real links to stdio children: one connection shared by concurrent
 * callers, a fresh link after the child dies (lazily, or in the background when eager), listeners
 * that follow every link, discard of one link only, failing fast while backing off (until told to
 * forget the failures), and close.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import type { UpstreamLink } from '../../src/upstream/link.js';
import type { LinkEvent } from '../../src/upstream/link.js';
import { backoffDelay, UpstreamSlot, type SlotOptions } from '../../src/upstream/slot.js';
import { assertBuilt } from '../integration/harness/paths.js';
import { waitUntil } from '../integration/harness/wait.js';
import { connectFixture, logger, recordingSink, serverConfigs } from './fixture-link.js';

const slots: UpstreamSlot[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await Promise.all(slots.splice(0).map((slot) => slot.close()));
});

/** A slot over the fixture; `connects` counts the links it asked for. */
function fixtureSlot(options: Partial<SlotOptions> = {}): { slot: UpstreamSlot; connects: () => number } {
  let count = 0;
  const slot = new UpstreamSlot({
    server: 'fx',
    logger,
    connect: () => {
      count++;
      return connectFixture();
    },
    ...options,
  });
  slots.push(slot);
  return { slot, connects: () => count };
}

async function crash(link: UpstreamLink): Promise<void> {
  const closed = new Promise<void>((resolve) => link.on((event) => event.kind === 'closed' && resolve()));
  await link.request('tools/call', { name: 'crash', arguments: {} }, { sink: recordingSink() }).catch(() => undefined);
  await closed;
}

describe('UpstreamSlot', () => {
  it('connects once for callers that arrive together, and hands each the same link', async () => {
    const { slot, connects } = fixtureSlot();
    expect(slot.state).toBe('idle');
    const links = await Promise.all([slot.get(), slot.get(), slot.get()]);
    expect(new Set(links).size).toBe(1);
    expect(connects()).toBe(1);
    expect(slot.state).toBe('ready');
    expect(slot.current).toBe(links[0]);
  });

  it('gives the next caller a fresh link after the child died, and its listeners hear both links', async () => {
    const { slot, connects } = fixtureSlot();
    const events: LinkEvent[] = [];
    slot.on((event) => events.push(event));
    const first = await slot.get();
    await crash(first);
    expect(slot.current).toBeUndefined();
    expect(slot.state).toBe('error');
    const second = await slot.get();
    expect(second).not.toBe(first);
    expect(connects()).toBe(2);
    expect(events.filter((e) => e.kind === 'closed')).toHaveLength(1);
    const changed = new Promise<LinkEvent>((resolve) => slot.on((event) => event.kind === 'listChanged' && resolve(event)));
    await second.request('tools/call', { name: 'toggle_tool', arguments: {} }, { sink: recordingSink() });
    expect(await changed).toEqual({ kind: 'listChanged', list: 'tools' });
  });

  it('reconnects an eager slot in the background after its child died', async () => {
    const { slot, connects } = fixtureSlot({ eager: true });
    const first = await slot.get();
    await crash(first);
    const replaced = await waitUntil(() => slot.current, 'the eager slot reconnected');
    expect(replaced).not.toBe(first);
    expect(connects()).toBe(2);
  });

  it('discards only the link it was told about', async () => {
    const { slot } = fixtureSlot();
    const first = await slot.get();
    await slot.discard(first);
    expect(first.closed).toBe(true);
    const second = await slot.get();
    await slot.discard(first); // stale: the live link stays
    expect(slot.current).toBe(second);
    expect(second.closed).toBe(false);
  });

  it('fails fast, without dialling, while a server that keeps failing is backing off', async () => {
    const broken = serverConfigs({ fx: { transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] } }).fx!;
    let count = 0;
    const slot = new UpstreamSlot({
      server: 'fx',
      logger,
      initialBackoffMs: 60_000,
      maxBackoffMs: 60_000,
      connect: () => {
        count++;
        return connectFixture(broken);
      },
    });
    slots.push(slot);
    await expect(slot.get()).rejects.toBeInstanceOf(UpstreamError);
    // The first reconnect after a failure is immediate (one lost process costs one error) …
    await expect(slot.get()).rejects.toBeInstanceOf(UpstreamError);
    expect(count).toBe(2);
    // … then the backoff window is far longer than a caller may wait: refused at once.
    const refused = await slot.get().catch((e: unknown) => e as UpstreamError);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(refused.message).toMatch(/restarting/);
    expect(count).toBe(2);
    expect(slot.state).toBe('error');
    // Told the next attempt differs (a new credential): it dials at once.
    slot.forgetFailures();
    await expect(slot.get()).rejects.toBeInstanceOf(UpstreamError);
    expect(count).toBe(3);
  });

  it('closes its link and refuses callers once closed', async () => {
    const { slot } = fixtureSlot();
    const link = await slot.get();
    await slot.close();
    expect(link.closed).toBe(true);
    expect(slot.state).toBe('closed');
    await expect(slot.get()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });
});

describe('backoffDelay', () => {
  it.each([
    [0, 0],
    [1, 250],
    [2, 500],
    [5, 4_000],
    [20, 30_000],
  ])('after %i failures waits %i ms (jitter at its midpoint)', (failures, expected) => {
    expect(backoffDelay(failures, 250, 30_000, () => 0.5)).toBe(expected);
  });

  it('stays within ±20% of the base delay', () => {
    expect(backoffDelay(3, 250, 30_000, () => 0)).toBe(800);
    expect(backoffDelay(3, 250, 30_000, () => 1)).toBe(1_200);
  });
});
