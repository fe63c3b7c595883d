/**
 * Scale-out with the redis store (issue 4 part 4): two gateway PROCESSES on 127.0.0.1 sharing
 * the real Redis under a key root of their own. A session opened on replica A is served by B
 * (forwarded to A while A lives), resumed on B, and taken over by B when A is SIGKILLed during a
 * long call: B replays every event A stored and answers the interrupted call with the failover
 * error, then serves new calls in the same session.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../integration/harness/paths.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';
import { readSse, RawSseSession, type SseEvent } from '../session/sse-client.js';
import { callInSession as call, LEASE_MS, postInSession as post, resultText, resumeUntil, startReplica } from './replicas.js';

const cleanup = new Cleanup();
let prefix: string;

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});

afterEach(async () => {
  await cleanup.run();
});

const replica = (replicaId: string, extra: Record<string, unknown> = {}) => startReplica(cleanup, prefix, replicaId, extra);

describe('two gateway replicas sharing Redis', () => {
  it('answers on B a call for a session A owns and is alive (forwarded to A)', async () => {
    prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const [a, b] = await Promise.all([replica('A'), replica('B')]);
    const session = await RawSseSession.open(a.url);

    const messages = await call(b.url, session.sessionId, 7, 'fx__echo', { text: 'via B' });
    const answer = messages.find((m) => m.id === 7);
    expect(answer?.error).toBeUndefined();
    expect(resultText(answer)).toBe('via B');
    // Still A's session: B forwarded rather than taking it over.
    const owner = await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${session.sessionId}`));
    expect(owner).toBe('A');
  }, 60_000);

  it('resumes on B, with Last-Event-ID, a call stream that A is serving', async () => {
    prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const [a, b] = await Promise.all([replica('A'), replica('B')]);
    const session = await RawSseSession.open(a.url);

    const cut = new AbortController();
    const started = await post(a.url, session.sessionId, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 1500, steps: 5 }, _meta: { progressToken: 'p3' } } }, cut.signal);
    let lastId: string | undefined;
    await within(
      readSse(started.body!, (event) => {
        lastId = event.id ?? lastId;
        return lastId === undefined;
      }),
      10_000,
      'the first event id of the call',
    );
    cut.abort();

    const events = await resumeUntil(b.url, session.sessionId, lastId!, (m) => m.id === 3);
    const messages = events.filter((e) => e.data.trim() !== '').map((e) => JSON.parse(e.data) as WireMessage);
    expect(resultText(messages.find((m) => m.id === 3))).toBe('slept 1500ms');
    expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(5);
    const stream = lastId!.slice(0, lastId!.lastIndexOf('::'));
    for (const event of events.filter((e) => e.id !== undefined)) expect(event.id!.startsWith(`${stream}::`)).toBe(true);
  }, 60_000);

  it('takes over a session when A is SIGKILLed mid-call: every stored event, a failover error, then new calls', async () => {
    prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const [a, b] = await Promise.all([replica('A'), replica('B')]);
    const session = await RawSseSession.open(a.url);
    const sid = session.sessionId;

    const started = await post(a.url, sid, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 60_000, steps: 60 }, _meta: { progressToken: 'p11' } } });
    const seen: SseEvent[] = [];
    await within(
      readSse(started.body!, (event) => {
        seen.push(event);
        return seen.filter((e) => e.data.includes('notifications/progress')).length < 2;
      }),
      15_000,
      'two progress events of the slow call',
    );
    // Resume from the call's first event: the replay must bring every later event A stored.
    const lastId = seen[0]!.id!;
    const stream = lastId.slice(0, lastId.lastIndexOf('::'));
    a.cli.child.kill('SIGKILL');
    await a.cli.exited(10_000);

    // What A had stored on that stream after the last event the client saw.
    const lastSeq = Number(lastId.slice(lastId.lastIndexOf('::') + 2));
    const stored = await withRedis(SHARED_REDIS_URL, async (client) => {
      const entries = await client.xRange(`${prefix}events:${sid}`, '-', '+');
      return entries
        .map((e) => ({ seq: Number(e.id.split('-')[1]), stream: e.message.s, message: e.message.m }))
        .filter((e) => e.stream === stream && e.seq > lastSeq && e.message !== '{}');
    });
    await waitUntil(
      async () => (await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sid}`))) === null,
      "A's lease to expire",
      LEASE_MS * 5,
    );

    const events = await resumeUntil(b.url, sid, lastId, (m) => m.id === 11);
    const replayed = events.filter((e) => e.data.trim() !== '');
    // Writes to Redis are fire-and-forget: the last event the client saw may not have reached
    // Redis before the SIGKILL; the first progress event (a step earlier) has.
    expect(stored.length).toBeGreaterThanOrEqual(1);
    expect(replayed.slice(0, -1).map((e) => e.id)).toEqual(stored.map((e) => `${stream}::${e.seq}`));
    const failover = JSON.parse(replayed.at(-1)!.data) as WireMessage;
    expect(failover).toMatchObject({ id: 11, error: { code: -32001, message: 'interrupted by failover; retry' } });
    const failoverSeq = Number(replayed.at(-1)!.id!.split('::')[1]);
    expect(failoverSeq).toBeGreaterThan(Math.max(lastSeq, ...stored.map((e) => e.seq)));

    // The session lives on B now: new calls work, and B owns the lease.
    const messages = await call(b.url, sid, 12, 'fx__echo', { text: 'after failover' });
    expect(resultText(messages.find((m) => m.id === 12))).toBe('after failover');
    const owner = await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sid}`));
    expect(owner).toBe('B');
  }, 90_000);

  it('counts a session it would take over in the same sessions.max as its own, whichever endpoint those are on', async () => {
    prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const [a, b] = await Promise.all([replica('A', { sessions: { max: 1 } }), replica('B', { sessions: { max: 1 } })]);
    const orphan = await RawSseSession.open(a.url);
    // B's one place is taken by a session of its per-server side channel.
    const local = await RawSseSession.open(`${b.url}/servers/fx`);
    a.cli.child.kill('SIGKILL');
    await a.cli.exited(10_000);
    await waitUntil(
      async () => (await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${orphan.sessionId}`))) === null,
      "A's lease to expire",
      LEASE_MS * 5,
    );

    const refused = await post(b.url, orphan.sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'x' } } });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ id: null, error: { code: -32001, data: { code: 'SESSION_LIMIT' } } });

    // Once B's own session ends, the orphan is taken over and served.
    await local.delete();
    const messages = await call(b.url, orphan.sessionId, 2, 'fx__echo', { text: 'adopted' });
    expect(resultText(messages.find((m) => m.id === 2))).toBe('adopted');
  }, 90_000);
});
