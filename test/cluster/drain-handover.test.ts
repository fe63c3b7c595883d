/**
 * Graceful drain in a cluster: replica A is sent SIGTERM while one of its sessions has a long
 * call streaming. A ends the call's stream at its drain deadline, hands the session's lease back
 * and exits 0; the client resumes on replica B with `Last-Event-ID` and gets the rest of the
 * stream from the shared store — ending in the failover error for the call A could not finish —
 * and then new calls in the same session, served by B. No lease expiry is waited for.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../integration/harness/paths.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';
import { readSse, RawSseSession, type SseEvent, type WireMessage } from '../session/sse-client.js';
import { callInSession, postInSession, resultText, resumeUntil, startReplica } from './replicas.js';

const cleanup = new Cleanup();

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});
afterEach(() => cleanup.run());

describe('SIGTERM to one replica of two', () => {
  it('ends its streams, hands the session over, exits 0; the client resumes on the other replica', async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const drain = { lifecycle: { drainTimeoutMs: 300 } };
    const [a, b] = await Promise.all([
      startReplica(cleanup, prefix, 'A', drain, { PORTCULLIS_LOG_LEVEL: 'info' }),
      startReplica(cleanup, prefix, 'B', drain),
    ]);
    const session = await RawSseSession.open(a.url);
    const sid = session.sessionId;

    const started = await postInSession(a.url, sid, { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 60_000, steps: 600 }, _meta: { progressToken: 'p21' } } });
    const seen: SseEvent[] = [];
    const ended = readSse(started.body!, (event) => {
      seen.push(event);
      return true;
    });
    await waitUntil(() => (seen.some((e) => e.data.includes('notifications/progress')) ? true : undefined), 'a progress event of the slow call');

    a.cli.child.kill('SIGTERM');
    // A ends the call's stream (the drain deadline passed), rather than resetting the connection.
    expect(await within(ended, 15_000, 'the call stream ending')).toBe('ended');
    expect(await a.cli.exited(20_000)).toEqual({ code: 0, signal: null });
    expect(a.cli.stderr()).toContain('drain deadline passed');
    // The lease was handed back on close: nobody owns the session, no expiry to wait for.
    expect(await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sid}`))).toBeNull();

    const lastId = [...seen].reverse().find((e) => e.id !== undefined)!.id!;
    const events = await resumeUntil(b.url, sid, lastId, (m) => m.id === 21);
    const final = JSON.parse(events.filter((e) => e.data.trim() !== '').at(-1)!.data) as WireMessage;
    expect(final).toMatchObject({ id: 21, error: { code: -32001, message: 'interrupted by failover; retry' } });

    const messages = await callInSession(b.url, sid, 22, 'fx__echo', { text: 'on B' });
    expect(resultText(messages.find((m) => m.id === 22))).toBe('on B');
    expect(await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sid}`))).toBe('B');
  }, 90_000);
});
