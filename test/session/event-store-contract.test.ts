/**
 * The one contract every event store kind keeps (DESIGN.md §4), run against the memory store and
 * the Redis store (the suite's own redis-server, a unique key prefix per run, deleted after).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/observability/logger.js';
import { parseEventId } from '../../src/session/event-id.js';
import type { GatewayEventStore, SessionEventStore } from '../../src/session/event-store.js';
import { createMemoryEventStore } from '../../src/session/memory-event-store.js';
import { createRedisEventStore } from '../../src/session/redis-event-store.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from './redis-helpers.js';

const prefix = uniquePrefix();

interface Budget {
  maxSessionBytes?: number;
  maxTotalBytes?: number;
}

const KINDS: Array<{ kind: string; make: (limit: number, budget?: Budget) => GatewayEventStore }> = [
  { kind: 'memory', make: (limit, budget) => createMemoryEventStore({ limit, maxSessions: 64, ...budget }) },
  {
    kind: 'redis',
    make: (limit, budget) =>
      createRedisEventStore({ url: SHARED_REDIS_URL, limit, historyTtlMs: 60_000, keyPrefix: prefix, allowPrivateNetwork: true, logger: silentLogger(), ...budget }),
  },
];

/** A notification whose serialised JSON is exactly `bytes` long. */
function sized(n: number, bytes: number): JSONRPCMessage {
  const base = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n, pad: '' } }).length;
  return { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n, pad: 'x'.repeat(bytes - base) } } as JSONRPCMessage;
}

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } });

/** What a replay sends, as [id, data] pairs. */
async function replay(store: SessionEventStore, lastEventId: string): Promise<{ stream: string; sent: Array<[string, unknown]> }> {
  const sent: Array<[string, unknown]> = [];
  const stream = await store.replayEventsAfter(lastEventId, {
    send: async (id, message) => {
      sent.push([id, (message as { params?: { data?: unknown } }).params?.data]);
    },
  });
  return { stream, sent };
}

async function verdict(store: SessionEventStore, id: string): Promise<string> {
  const point = await store.resumePoint(id);
  return point.ok ? 'ok' : point.code;
}

beforeAll(async () => {
  await assertSharedRedis();
});

afterAll(async () => {
  await deleteKeysUnder(SHARED_REDIS_URL, prefix);
});

describe.each(KINDS)('the $kind event store', ({ make }) => {
  const open: GatewayEventStore[] = [];
  let sessions = 0;

  async function store(limit = 100, budget?: Budget): Promise<GatewayEventStore> {
    const made = make(limit, budget);
    open.push(made);
    await made.start();
    return made;
  }

  const session = (gateway: GatewayEventStore) => gateway.forSession(`session-${process.pid}-${(sessions += 1)}`);

  afterEach(async () => {
    for (const made of open.splice(0)) await made.close();
  });

  it('gives each event an id <stream>::<seq> whose sequence increases on every stream', async () => {
    const s = session(await store());
    const ids: string[] = [];
    // Same millisecond, two streams interleaved: order comes from the counter, never the clock.
    for (let i = 0; i < 20; i += 1) ids.push(await s.storeEvent(i % 2 === 0 ? 'a' : 'b', note(i)));
    const parsed = ids.map((id) => parseEventId(id));
    expect(parsed.every((p) => p !== undefined)).toBe(true);
    for (const stream of ['a', 'b']) {
      const seqs = parsed.filter((p) => p?.streamId === stream).map((p) => p!.seq);
      expect(seqs).toHaveLength(10);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(10);
    }
  });

  it('accepts the SDK’s empty priming event and never replays it', async () => {
    const s = session(await store());
    const priming = await s.storeEvent('a', {} as JSONRPCMessage);
    await s.storeEvent('a', note(1));
    await s.storeEvent('a', note(2));
    expect(await verdict(s, priming)).toBe('ok');
    const { sent } = await replay(s, priming);
    expect(sent.map(([, data]) => data)).toEqual([1, 2]);
  });

  it('replays exactly the events of the resumed stream after the id, in order, with their ids', async () => {
    const s = session(await store());
    const a: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const id = await s.storeEvent(i % 3 === 0 ? 'b' : 'a', note(i));
      if (i % 3 !== 0) a.push(id);
    }
    const { stream, sent } = await replay(s, a[4]!);
    expect(stream).toBe('a');
    expect(sent.map(([id]) => id)).toEqual(a.slice(5));
    expect(sent.map(([, data]) => data)).toEqual([...Array(30).keys()].filter((i) => i % 3 !== 0).slice(5));
  });

  it('replays nothing from the last event of a stream, and still names the stream', async () => {
    const s = session(await store());
    await s.storeEvent('a', note(1));
    const last = await s.storeEvent('a', note(2));
    await s.storeEvent('b', note(3));
    expect(await replay(s, last)).toEqual({ stream: 'a', sent: [] });
  });

  it('replays the standalone GET stream', async () => {
    const s = session(await store());
    const first = await s.storeEvent('_GET_stream', note(1));
    await s.storeEvent('_GET_stream', note(2));
    expect(await replay(s, first)).toEqual({ stream: '_GET_stream', sent: [[expect.stringMatching(/^_GET_stream::\d+$/), 2]] });
  });

  it('judges a resume point by what was stored before the check, while events keep arriving', async () => {
    const s = session(await store());
    await s.storeEvent('a', note(1));
    const last = await s.storeEvent('a', note(2));
    for (let round = 0; round < 20; round += 1) {
      const judging = s.resumePoint(last);
      const arriving = [s.storeEvent('a', note(3 + round)), s.storeEvent('b', note(100 + round))];
      expect((await judging).ok).toBe(true);
      await Promise.all(arriving);
    }
    expect((await replay(s, last)).sent.map(([, data]) => data)).toEqual([...Array(20).keys()].map((i) => 3 + i));
  });

  it('names the stream of an id it can resume from, and nothing for any other id', async () => {
    const s = session(await store());
    const id = await s.storeEvent('a', note(1));
    expect(await s.getStreamIdForEventId(id)).toBe('a');
    for (const other of ['nonsense', 'a::0', 'a::999', 'zzz::1', '']) expect(await s.getStreamIdForEventId(other)).toBeUndefined();
  });

  it('tells malformed, unknown and evicted resume points apart', async () => {
    const s = session(await store(4));
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) ids.push(await s.storeEvent('a', note(i)));
    expect(await verdict(s, 'not an id')).toBe('malformed');
    expect(await verdict(s, 'a::0')).toBe('malformed');
    expect(await verdict(s, 'a::999')).toBe('unknown');
    expect(await verdict(s, 'other::3')).toBe('unknown');
    expect(await verdict(s, ids[1]!)).toBe('evicted');
    await expect(replay(s, ids[1]!)).rejects.toThrow(/evicted/);
  });

  it('keeps at most `limit` events per session, evicting the oldest first', async () => {
    const s = session(await store(5));
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) ids.push(await s.storeEvent('a', note(i)));
    expect(await s.retained()).toBe(5);
    // Events 3…7 are kept: resuming from event 2 (evicted itself) loses nothing, from 1 it would.
    expect(await verdict(s, ids[2]!)).toBe('ok');
    expect((await replay(s, ids[2]!)).sent.map(([, data]) => data)).toEqual([3, 4, 5, 6, 7]);
    expect(await verdict(s, ids[1]!)).toBe('evicted');
  });

  it('lowers one session’s limit on request (eventStoreLimit), never raising it above the store’s', async () => {
    const gateway = await store(5);
    const lowered = session(gateway);
    const raised = session(gateway);
    const other = session(gateway);
    lowered.lowerLimit(2);
    raised.lowerLimit(1_000);
    for (let i = 0; i < 8; i += 1) {
      await lowered.storeEvent('a', note(i));
      await raised.storeEvent('a', note(i));
      await other.storeEvent('a', note(i));
    }
    expect(await lowered.retained()).toBe(2);
    expect(await raised.retained()).toBe(5);
    expect(await other.retained()).toBe(5);
  });

  it('still resumes a quiet stream whose last event other streams pushed out', async () => {
    const s = session(await store(3));
    const quiet = await s.storeEvent('quiet', note(0));
    for (let i = 1; i <= 5; i += 1) await s.storeEvent('busy', note(i));
    expect(await verdict(s, quiet)).toBe('ok');
    expect((await replay(s, quiet)).sent).toEqual([]);
    await s.storeEvent('quiet', note(6));
    expect((await replay(s, quiet)).sent.map(([, data]) => data)).toEqual([6]);
  });

  it('counts the limit per session: a chatty session never evicts another’s history', async () => {
    const gateway = await store(3);
    const calm = session(gateway);
    const chatty = session(gateway);
    const first = await calm.storeEvent('a', note(1));
    await calm.storeEvent('a', note(2));
    for (let i = 0; i < 50; i += 1) await chatty.storeEvent('a', note(i));
    expect(await calm.retained()).toBe(2);
    expect((await replay(calm, first)).sent.map(([, data]) => data)).toEqual([2]);
  });

  it('keeps at most maxSessionBytes of a session’s history, evicting the oldest first, and answers a resume past them as evicted', async () => {
    const s = session(await store(1_000, { maxSessionBytes: 4_000 }));
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push(await s.storeEvent('a', sized(i, 1_000)));
    expect(await s.retained()).toBe(4);
    expect(await verdict(s, ids[5]!)).toBe('ok');
    expect((await replay(s, ids[5]!)).sent.map(([, data]) => data)).toEqual([6, 7, 8, 9]);
    expect(await verdict(s, ids[4]!)).toBe('evicted');
    await expect(replay(s, ids[4]!)).rejects.toMatchObject({ name: 'ResumeRefused', point: { code: 'evicted' } });
  });

  it('keeps no event larger than the session budget, and never replays past it', async () => {
    const s = session(await store(1_000, { maxSessionBytes: 4_000 }));
    const before = await s.storeEvent('a', sized(1, 500));
    await s.storeEvent('a', sized(2, 10_000));
    const after = await s.storeEvent('a', sized(3, 500));
    expect(await s.retained()).toBe(1);
    expect(await verdict(s, before)).toBe('evicted');
    expect(await verdict(s, after)).toBe('ok');
  });

  it('keeps at most maxTotalBytes for every session together, the process’s oldest events going first', async () => {
    const gateway = await store(1_000, { maxSessionBytes: 4_000, maxTotalBytes: 6_000 });
    const early = session(gateway);
    const late = session(gateway);
    const earlyIds: string[] = [];
    for (let i = 0; i < 4; i += 1) earlyIds.push(await early.storeEvent('a', sized(i, 1_000)));
    // The late session's writes push out the early session's oldest events first.
    for (let i = 0; i < 4; i += 1) await late.storeEvent('a', sized(10 + i, 1_000));
    expect(await early.retained()).toBe(2);
    expect(await late.retained()).toBe(4);
    expect(await verdict(early, earlyIds[0]!)).toBe('evicted');
    expect((await replay(early, earlyIds[1]!)).sent.map(([, data]) => data)).toEqual([2, 3]);
    // A closed session's bytes are free again: a third session's writes take nothing of the late one's.
    await early.forget();
    const third = session(gateway);
    for (let i = 0; i < 2; i += 1) await third.storeEvent('a', sized(20 + i, 1_000));
    expect(await late.retained()).toBe(4);
    expect(await third.retained()).toBe(2);
  });

  it('never resumes one session from another session’s event id', async () => {
    const gateway = await store();
    const one = session(gateway);
    const two = session(gateway);
    const id = await one.storeEvent('shared-name', note(1));
    await one.storeEvent('shared-name', note(2));
    expect(await verdict(two, id)).toBe('unknown');
    const own = await two.storeEvent('shared-name', note(3));
    await two.storeEvent('shared-name', note(4));
    // The same id text means this session's own event now: it replays its own history only.
    expect(own).toBe(id);
    expect((await replay(two, own)).sent.map(([, data]) => data)).toEqual([4]);
    expect(await verdict(one, id)).toBe('ok');
    expect((await replay(one, id)).sent.map(([, data]) => data)).toEqual([2]);
  });

  it('forgets a closed session’s history and keeps nothing stored after', async () => {
    const s = session(await store());
    const id = await s.storeEvent('a', note(1));
    await s.storeEvent('a', note(2));
    await s.forget();
    await s.storeEvent('a', note(3));
    expect(await s.retained()).toBe(0);
    expect(await verdict(s, id)).toBe('unknown');
  });
});
