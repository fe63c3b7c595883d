/**
 * Resumable SSE through the gateway, end to end (DESIGN.md §4; issue 4 chaos tests): a stdio
 * upstream emits numbered notifications on one call's stream while the client's connection is
 * cut at random points hundreds of times and resumed each time with `Last-Event-ID`. The client
 * must receive exactly the emitted sequence: no loss, no duplicate, in order, and nothing of
 * another stream. Runs with the memory store and the Redis store (the suite's own redis-server on a free loopback port).
 *
 * Figures (cuts, events, losses) are printed as one `chaos:` line per run.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, gatewayConfig, startTestGateway, waitUntil, within } from './harness.js';
import { assertSharedRedis, capturingLogger, deleteKeysUnder, keysUnder, privateRedis, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';
import { RawSseSession, readSse, type SseEvent, type WireMessage } from '../session/sse-client.js';
import { seededRandom, type SeededRandom } from '../setup/random.js';

const EMITTER = fileURLToPath(new URL('../session/children/numbered-emitter.mjs', import.meta.url));
const EVENTS = 10_000;
const MIN_CUTS = 200;
/** A cut comes after 1…MAX_GAP messages of a connection (mean ≈ 30: ≈ 330 cuts per 10,000). */
const MAX_GAP = 60;
/**
 * Hang guards, not speed checks: connections per call, how long a resume may meet 409, and a stall bound
 * (no new notification for that long means the stream is stuck). A loaded machine makes a call
 * slower, never wrong, so there is no bound on the call's total time short of the test's own.
 */
const MAX_CONNECTIONS = 5_000;
const CONFLICT_BOUND_MS = 20_000;
const STALL_MS = 60_000;
const TEST_HANG_BOUND_MS = 900_000;
/**
 * The emitter pauses after every 10 notifications: ≥ 10 s of live emission per stream, paced so
 * the client keeps up and most cuts land in the live tail rather than in a long replay (with two
 * streams the client reads twice as much, so each stream goes at half the rate).
 */
const PACE_ONE_STREAM = { burst: 10, pauseMs: 10 };
const PACE_TWO_STREAMS = { burst: 10, pauseMs: 20 };

const emitter = () => ({ transport: 'stdio', command: process.execPath, args: [EMITTER] });

interface ChaosRun {
  label: string;
  received: number[];
  /** Notifications of another label seen on this stream (must stay 0). */
  foreign: number;
  results: WireMessage[];
  cuts: number;
  /** Resume GETs answered 200 / 409 (409: the server had not yet noticed the cut; retried). */
  resumed: number;
  conflicts: number;
  /** Streams the server ended before the result (none expected). */
  serverEnds: number;
}

/**
 * Calls `tool` and reads its stream, cutting the connection after a random number of messages
 * and resuming from the last event id received, until the call's result has arrived.
 */
async function chaosCall(
  session: RawSseSession,
  callId: number,
  tool: string,
  label: string,
  random: SeededRandom,
  pace: { burst: number; pauseMs: number },
): Promise<ChaosRun> {
  const run: ChaosRun = { label, received: [], foreign: 0, results: [], cuts: 0, resumed: 0, conflicts: 0, serverEnds: 0 };
  let progressAt = Date.now();
  let progressCount = 0;
  let lastEventId: string | undefined;
  let controller = new AbortController();
  let response = await session.post(
    { jsonrpc: '2.0', id: callId, method: 'tools/call', params: { name: tool, arguments: { label, count: EVENTS, ...pace } } },
    controller.signal,
  );

  for (let connection = 1; ; connection += 1) {
    if (run.received.length > progressCount) {
      progressCount = run.received.length;
      progressAt = Date.now();
    }
    if (connection > MAX_CONNECTIONS || Date.now() - progressAt > STALL_MS) {
      throw new Error(`hang guard (TEST_SEED=${random.seed}): ${label} not done after ${connection - 1} connections, ${run.received.length} events`);
    }
    if (response.status !== 200 || response.body === null) {
      throw new Error(`(TEST_SEED=${random.seed}) ${label}: HTTP ${response.status} ${await response.text()}`);
    }
    const cutAfter = random.int(1, MAX_GAP + 1);
    let seen = 0;
    let eventAt = Date.now();
    const connectionController = controller;
    const stallWatch = setInterval(() => {
      if (Date.now() - eventAt > STALL_MS) connectionController.abort();
    }, 1_000);
    const outcome = await readSse(response.body, (event) => {
      eventAt = Date.now();
      if (event.id !== undefined) lastEventId = event.id;
      if (event.data.trim() === '') return true; // the priming event: an id, nothing else
      const message = JSON.parse(event.data) as WireMessage;
      if (message.method === 'notifications/message') {
        const data = message.params?.data;
        if (data?.label === label && typeof data.seq === 'number') run.received.push(data.seq);
        else run.foreign += 1;
      } else if (message.id === callId) {
        run.results.push(message);
      }
      seen += 1;
      return run.results.length === 0 && seen < cutAfter;
    })
      .catch(() => 'failed' as const)
      .finally(() => clearInterval(stallWatch));
    controller.abort();
    if (run.results.length > 0) return run;
    if (outcome === 'stopped') run.cuts += 1;
    else run.serverEnds += 1;
    if (lastEventId === undefined) throw new Error(`(TEST_SEED=${random.seed}) ${label}: cut before any event id arrived`);

    // 409 until the server has noticed the cut, which no message tells the client: retried, bounded.
    const from = lastEventId;
    response = await waitUntil(
      async () => {
        controller = new AbortController();
        const resumed = await session.resume(from, controller.signal);
        if (resumed.status !== 409) return resumed;
        run.conflicts += 1;
        await resumed.text();
        return undefined;
      },
      `(TEST_SEED=${random.seed}) ${label}: a resume other than 409`,
      CONFLICT_BOUND_MS,
      2,
    );
    run.resumed += 1;
  }
}

function expectExactSequence(run: ChaosRun): void {
  const expected = Array.from({ length: EVENTS }, (_, i) => i + 1);
  const seen = new Set(run.received);
  const lost = expected.filter((seq) => !seen.has(seq)).length;
  const duplicated = run.received.length - seen.size;
  // One line of figures per run, for the record.
  console.log(
    `chaos: ${run.label}: events ${EVENTS}, received ${run.received.length}, cuts ${run.cuts}, resumes ${run.resumed} (+${run.conflicts} × 409 retried), server ends ${run.serverEnds}, lost ${lost}, duplicated ${duplicated}, foreign ${run.foreign}`,
  );
  expect({ lost, duplicated, foreign: run.foreign }).toEqual({ lost: 0, duplicated: 0, foreign: 0 });
  expect(run.received).toEqual(expected);
  expect(run.results).toHaveLength(1);
  expect(run.results[0]?.result).toMatchObject({ content: [{ type: 'text', text: `emitted ${EVENTS}` }] });
  expect(run.cuts).toBeGreaterThanOrEqual(MIN_CUTS);
}

const STORES = [
  { kind: 'memory', eventStore: { kind: 'memory', limit: 50_000 } },
  { kind: 'redis', eventStore: { kind: 'redis', limit: 50_000, url: SHARED_REDIS_URL, allowPrivateNetwork: true } },
] as const;

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});

describe.each(STORES)('resumable streams through the gateway ($kind store)', ({ kind, eventStore }) => {
  const cleanup = new Cleanup();
  const sessionIds: string[] = [];
  afterEach(async () => {
    await cleanup.run();
    // Ended sessions leave no history behind in Redis (the gateway's default key prefix).
    if (kind === 'redis') {
      for (const id of sessionIds.splice(0)) expect(await keysUnder(SHARED_REDIS_URL, `portcullis:events:${id}`)).toEqual([]);
    }
  });

  async function openSession(): Promise<RawSseSession> {
    const gateway = await startTestGateway(cleanup, { one: emitter(), two: emitter() }, { eventStore });
    const session = await RawSseSession.open(gateway.url);
    sessionIds.push(session.sessionId);
    cleanup.add(() => within(session.delete(), 5_000, 'DELETE').catch(() => undefined));
    // List first: a call must be the only request in flight on its upstream connection, or the
    // gateway cannot tell which stream the upstream's notifications belong to.
    const listed = await session.request(1, 'tools/list');
    expect(JSON.stringify(listed)).toContain('one__emit');
    return session;
  }

  it(
    'delivers 10,000 notifications exactly once and in order across at least 200 random cuts',
    async () => {
      const session = await openSession();
      expectExactSequence(await chaosCall(session, 2, 'one__emit', `${kind}-single`, seededRandom(`resumability ${kind}-single`), PACE_ONE_STREAM));
    },
    TEST_HANG_BOUND_MS,
  );

  it(
    'keeps two concurrent streams of one session apart across cuts: no cross-stream replay',
    async () => {
      const session = await openSession();
      const [a, b] = await Promise.all([
        chaosCall(session, 2, 'one__emit', `${kind}-A`, seededRandom(`resumability ${kind}-A`), PACE_TWO_STREAMS),
        chaosCall(session, 3, 'two__emit', `${kind}-B`, seededRandom(`resumability ${kind}-B`), PACE_TWO_STREAMS),
      ]);
      expectExactSequence(a);
      expectExactSequence(b);
    },
    TEST_HANG_BOUND_MS,
  );

  if (kind === 'redis') {
    it('deletes the session’s history from Redis when the session ends', async () => {
      const session = await openSession();
      const key = `portcullis:events:${session.sessionId}`;
      // A call that streams stores its events (a call answered in one JSON body stores none).
      await emitAll(session, 2, 3);
      expect(await keysUnder(SHARED_REDIS_URL, key)).toEqual([key]);
      await session.delete();
      // The session closes (children reaped, history dropped) just after the DELETE is answered.
      await waitUntil(async () => (await keysUnder(SHARED_REDIS_URL, key)).length === 0, 'the session key deleted');
    });
  }
});

/** Every SSE event of a response, read to its end (hang guard 15 s). */
async function eventsOf(response: Response): Promise<SseEvent[]> {
  if (response.body === null) throw new Error(`no body (HTTP ${response.status})`);
  const events: SseEvent[] = [];
  await within(
    readSse(response.body, (event) => {
      events.push(event);
      return true;
    }),
    15_000,
    'reading an SSE response',
  );
  return events;
}

/** Calls the emitter for `count` notifications and reads the whole stream. */
async function emitAll(session: RawSseSession, id: number, count: number): Promise<SseEvent[]> {
  const response = await session.post({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'one__emit', arguments: { label: `call-${id}`, count } },
  });
  expect(response.status).toBe(200);
  return eventsOf(response);
}

const seqsOf = (events: SseEvent[]) =>
  events.filter((e) => e.data.trim() !== '').map((e) => (JSON.parse(e.data) as WireMessage).params?.data?.seq ?? 'result');

describe('resume answers through the gateway', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  async function openSession(limit: number): Promise<RawSseSession> {
    const gateway = await startTestGateway(cleanup, { one: emitter() }, { eventStore: { kind: 'memory', limit } });
    const session = await RawSseSession.open(gateway.url);
    cleanup.add(() => within(session.delete(), 5_000, 'DELETE').catch(() => undefined));
    await session.request(1, 'tools/list');
    return session;
  }

  it('starts each call’s stream with a priming event carrying an id and a retry interval', async () => {
    const session = await openSession(1_000);
    const events = await emitAll(session, 2, 3);
    expect(events[0]).toMatchObject({ id: expect.stringMatching(/::\d+$/), retry: 1000, data: '' });
    expect(events.slice(1).every((e) => e.id !== undefined)).toBe(true);
    expect(seqsOf(events)).toEqual([1, 2, 3, 'result']);
  });

  it('replays the rest of a finished call’s stream after the id, then ends it', async () => {
    const session = await openSession(1_000);
    const events = await emitAll(session, 2, 20);
    const resumed = await session.resume(events[5]!.id!);
    expect(resumed.status).toBe(200);
    const replayed = await eventsOf(resumed);
    expect(seqsOf(replayed)).toEqual([...seqsOf(events).slice(5)]);
    expect(replayed.map((e) => e.id)).toEqual(events.slice(6).map((e) => e.id));
  });

  it.each([
    ['a malformed id', 'not-an-event-id'],
    ['an id of no stream of this session', 'no-such-stream::1'],
  ])('answers %s with 400 and a JSON-RPC error', async (_, id) => {
    const session = await openSession(1_000);
    await emitAll(session, 2, 3);
    const response = await session.resume(id);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/Last-Event-ID/) } });
  });

  it('answers a resume point older than the retained history with 410 and says the history was evicted', async () => {
    const session = await openSession(50);
    const events = await emitAll(session, 2, 200);
    const response = await session.resume(events[0]!.id!);
    expect(response.status).toBe(410);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringMatching(/evicted/) } });
    // The newest events are still there.
    const recent = await session.resume(events.at(-10)!.id!);
    expect(recent.status).toBe(200);
    expect(seqsOf(await eventsOf(recent))).toEqual(seqsOf(events).slice(-9));
  });
});

describe.each(['memory', 'redis'] as const)('the %s store’s byte budget seen through the gateway', (kind) => {
  const cleanup = new Cleanup();
  const prefix = uniquePrefix();
  afterEach(() => cleanup.run());
  afterAll(() => (kind === 'redis' ? deleteKeysUnder(SHARED_REDIS_URL, prefix) : undefined));

  it('evicts a session’s oldest events past maxSessionBytes: resuming before them is 410, the newest still replay', async () => {
    if (kind === 'redis') await assertSharedRedis();
    const eventStore =
      kind === 'redis'
        ? { kind, limit: 10_000, maxSessionBytes: 4_096, url: SHARED_REDIS_URL, allowPrivateNetwork: true, keyPrefix: prefix }
        : { kind, limit: 10_000, maxSessionBytes: 4_096 };
    const gateway = await startTestGateway(cleanup, { one: emitter() }, { eventStore });
    const session = await RawSseSession.open(gateway.url);
    cleanup.add(() => within(session.delete(), 5_000, 'DELETE').catch(() => undefined));
    await session.request(1, 'tools/list');
    const events = await emitAll(session, 2, 200);
    const evicted = await session.resume(events[0]!.id!);
    expect(evicted.status).toBe(410);
    expect(await evicted.json()).toMatchObject({ error: { message: expect.stringMatching(/evicted/) } });
    const recent = await session.resume(events.at(-10)!.id!);
    expect(recent.status).toBe(200);
    expect(seqsOf(await eventsOf(recent))).toEqual(seqsOf(events).slice(-9));
    if (kind === 'redis') {
      // Redis holds the budget too, not just the gateway's ledger.
      // The session's event stream; tool pins share the prefix (`<prefix>integrity:…`, docs/security.md).
      const keys = (await keysUnder(SHARED_REDIS_URL, prefix)).filter((key) => !key.startsWith(`${prefix}integrity:`));
      expect(keys).toHaveLength(1);
      const bytes = await withRedis(SHARED_REDIS_URL, async (client) => {
        const entries = await client.xRange(keys[0]!, '-', '+');
        return entries.reduce((sum, entry) => sum + Buffer.byteLength(String(entry.message.m ?? '')), 0);
      });
      expect(bytes).toBeLessThanOrEqual(4_096);
    }
  });
});

describe('a Redis restart during a session', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  it('keeps the gateway serving, logs the outage once, and brings resumability back with Redis', async () => {
    const redis = await privateRedis();
    cleanup.add(() => redis.stop());
    const { logger, lines } = capturingLogger();
    const config = gatewayConfig({ one: emitter() }, { eventStore: { kind: 'redis', limit: 1_000, url: redis.url, allowPrivateNetwork: true } });
    const gateway = await startGateway({ config, logger, env: process.env });
    cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
    const session = await RawSseSession.open(gateway.url);
    cleanup.add(() => within(session.delete(), 5_000, 'DELETE').catch(() => undefined));
    await session.request(1, 'tools/list');

    const before = await emitAll(session, 2, 20);
    const resumedBefore = await session.resume(before[10]!.id!);
    expect(resumedBefore.status).toBe(200);
    expect(seqsOf(await eventsOf(resumedBefore))).toEqual(seqsOf(before).slice(10));

    await redis.stop();
    // Calls keep working, every notification delivered live.
    const during = await emitAll(session, 3, 20);
    expect(seqsOf(during)).toEqual([...Array.from({ length: 20 }, (_, i) => i + 1), 'result']);
    const unavailable = await session.resume(during[10]!.id!);
    expect(unavailable.status).toBe(503);
    await unavailable.text();
    const outages = () => lines.filter((line) => String(line.msg).includes('redis event store unavailable'));
    expect(outages()).toHaveLength(1);

    await redis.start();
    // Resumability returns: a call made once Redis is back can be resumed mid-stream.
    let callId = 100;
    await waitUntil(
      async () => {
        const events = await emitAll(session, callId++, 20);
        const resumed = await session.resume(events[5]!.id!);
        if (resumed.status !== 200) {
          await resumed.text();
          return false;
        }
        return JSON.stringify(seqsOf(await eventsOf(resumed))) === JSON.stringify(seqsOf(events).slice(5));
      },
      'resumability after Redis restarted',
      20_000,
      100,
    );
    // History from before the restart is gone: refused as evicted, never replayed with a gap.
    const old = await session.resume(before[10]!.id!);
    expect(old.status).toBe(410);
    await old.text();
    expect(outages()).toHaveLength(1);
    expect(lines.some((line) => String(line.msg).includes('resumability restored'))).toBe(true);
  }, 60_000);
});
