import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../src/session/memory-event-store.js';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } });

describe('the memory event store', () => {
  it('keeps at most `limit` events of a session that emits 1,000,000, and replays exactly those', async () => {
    const limit = 10_000;
    const store = createMemoryEventStore({ limit, maxSessions: 4 });
    const session = store.forSession('one-million');
    const message = note(0);
    let last = '';
    let resumable = '';
    let evicted = '';
    for (let i = 1; i <= 1_000_000; i += 1) {
      last = await session.storeEvent('stream', message);
      if (i === 1_000_000 - limit) resumable = last;
      if (i === 1_000_000 - limit - 1) evicted = last;
      if (i % 100_000 === 0) expect(await session.retained()).toBeLessThanOrEqual(limit);
    }
    expect(await session.retained()).toBe(limit);
    expect(last).toBe('stream::1000000');
    let replayed = 0;
    await session.replayEventsAfter(resumable, {
      send: async () => {
        replayed += 1;
      },
    });
    expect(replayed).toBe(limit);
    expect((await session.resumePoint(evicted)).ok).toBe(false);
    await store.close();
  });

  it('bounds the sessions that have history: the least recently written loses it, not its counter', async () => {
    const store = createMemoryEventStore({ limit: 100, maxSessions: 2 });
    const [a, b, c] = ['a', 'b', 'c'].map((id) => store.forSession(id)) as [
      ReturnType<typeof store.forSession>,
      ReturnType<typeof store.forSession>,
      ReturnType<typeof store.forSession>,
    ];
    const fromA = await a.storeEvent('s', note(1));
    await b.storeEvent('s', note(2));
    await c.storeEvent('s', note(3)); // a is the least recently written: its history goes
    expect(await a.retained()).toBe(0);
    expect(await a.resumePoint(fromA)).toMatchObject({ ok: false, code: 'evicted' });
    // a writes again: it has history again, under new sequences (ids are never reused).
    const next = await a.storeEvent('s', note(4));
    expect(next).toBe('s::2');
    expect(await a.retained()).toBe(1);
    expect(await b.retained()).toBe(0);
    expect(await c.retained()).toBe(1);
    await store.close();
  });

  it('refuses options it cannot use when built', () => {
    expect(() => createMemoryEventStore({ limit: 0, maxSessions: 1 })).toThrow(TypeError);
    expect(() => createMemoryEventStore({ limit: 1, maxSessions: 0 })).toThrow(TypeError);
  });
});
