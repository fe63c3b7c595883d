import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { LiveTailGate, refusedResume } from '../../src/inbound/resume.js';
import { resumeProblem, type ResumeProblem } from '../../src/session/event-id.js';
import { createMemoryEventStore } from '../../src/session/memory-event-store.js';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } });

describe('refusedResume', () => {
  it.each<[ResumeProblem, number, number]>([
    ['malformed', 400, -32600],
    ['unknown', 400, -32600],
    ['evicted', 410, -32600],
    ['unavailable', 503, -32603],
  ])('answers %s with HTTP %i and JSON-RPC code %i', async (code, status, rpcCode) => {
    const point = resumeProblem(code);
    if (point.ok) throw new Error('unreachable');
    const response = refusedResume(point);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: rpcCode, message: point.message } });
  });
});

describe('LiveTailGate', () => {
  const setup = () => {
    const session = createMemoryEventStore({ limit: 100, maxSessions: 1 }).forSession('s');
    const gate = new LiveTailGate();
    return { session, gate, store: gate.wrap(session) };
  };

  it('stores a held stream’s events at once but hands their ids back only after release, in order', async () => {
    const { session, gate, store } = setup();
    const first = await store.storeEvent('a', note(0));
    const release = gate.hold('a');
    const order: string[] = [];
    const held = [1, 2, 3].map((n) => store.storeEvent('a', note(n)).then((id) => void order.push(id)));
    const other = await store.storeEvent('b', note(9)); // another stream is not held
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    expect(other).toMatch(/^b::/);
    // Stored already: a replay running while the stream is held sees them.
    const replayed: string[] = [];
    await session.replayEventsAfter(first, { send: async (id) => void replayed.push(id) });
    expect(replayed).toHaveLength(3);
    release();
    // Released: held ids first, then anything stored after release, still in order.
    const after = store.storeEvent('a', note(4)).then((id) => void order.push(id));
    await Promise.all([...held, after]);
    expect(order).toEqual([...replayed, expect.stringMatching(/^a::/)]);
    expect(order[3]).not.toBe(order[2]);
  });

  it('passes events straight through when nothing is held', async () => {
    const { store } = setup();
    expect(await store.storeEvent('a', note(1))).toBe('a::1');
    expect(await store.storeEvent('a', note(2))).toBe('a::2');
  });
});
