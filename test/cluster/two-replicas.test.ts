/**
 * Scale-out with the redis store (issue 4 part 4): two gateway PROCESSES on 127.0.0.1 sharing
 * the real Redis under a key root of their own. A session opened on replica A is served by B
 * (forwarded to A while A lives), resumed on B, and taken over by B when A is SIGKILLed during a
 * long call: B replays every event A stored and answers the interrupted call with the failover
 * error, then serves new calls in the same session.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, type CliProcess } from '../integration/harness/cli.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { killPids, processesWithMarker } from '../integration/harness/processes.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';
import { readSse, RawSseSession, type SseEvent, type WireMessage } from '../session/sse-client.js';

const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;
const PROTOCOL_VERSION = '2025-11-25';
const LEASE_MS = 1_500;

interface Replica {
  cli: CliProcess;
  url: string;
}

const cleanup = new Cleanup();
let prefix: string;

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});

afterEach(async () => {
  await cleanup.run();
});

/** Starts one replica (its own config file, port 0, replica id, fixture marker; `extra` config fields). */
async function replica(replicaId: string, extra: Record<string, unknown> = {}): Promise<Replica> {
  const marker = newMarker();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cluster-'));
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      servers: { fx: stdioServer(marker) },
      eventStore: { kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: prefix, allowPrivateNetwork: true },
      cluster: { replicaId, leaseMs: LEASE_MS, allowPrivateNetwork: true },
      ...extra,
    }),
  );
  const cli = spawnCli(cleanup, ['--config', path, '--port', '0']);
  cleanup.add(() => {
    killPids(processesWithMarker(marker));
    rmSync(dir, { recursive: true, force: true });
  });
  // Graceful first (registered last, so it runs before the SIGKILL fallback).
  cleanup.add(async () => {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
    cli.child.kill('SIGTERM');
    await cli.exited(15_000).catch(() => undefined);
  });
  const url = await cli.waitForLine(READY, 30_000);
  return { cli, url };
}

function headers(sessionId: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION, ...extra };
}

function post(url: string, sessionId: string, message: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: headers(sessionId, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    body: JSON.stringify(message),
    signal,
  });
}

function resume(url: string, sessionId: string, lastEventId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'GET', headers: headers(sessionId, { accept: 'text/event-stream', 'last-event-id': lastEventId }), signal });
}

/** Resumes on `url` (retrying a 409/502/503 while the stream is released or the session moves), reading until `stop`. */
async function resumeUntil(url: string, sessionId: string, lastEventId: string, stop: (m: WireMessage) => boolean): Promise<SseEvent[]> {
  const response = await waitUntil(
    async () => {
      const answer = await resume(url, sessionId, lastEventId);
      if ([409, 502, 503].includes(answer.status)) {
        await answer.body?.cancel();
        return undefined;
      }
      return answer;
    },
    'a resume that is not refused as busy or moving',
    15_000,
    100,
  );
  expect(response.status).toBe(200);
  const events: SseEvent[] = [];
  const ending = await within(
    readSse(response.body!, (event) => {
      events.push(event);
      return event.data.trim() === '' || !stop(JSON.parse(event.data) as WireMessage);
    }),
    20_000,
    'the resumed stream to deliver the awaited message',
  );
  expect(ending).toBe('stopped');
  await response.body?.cancel().catch(() => undefined);
  return events;
}

/** Sends a request and reads its answer to the end: one JSON body, or an SSE stream. */
async function call(url: string, sessionId: string, id: number, name: string, args: Record<string, unknown>): Promise<WireMessage[]> {
  const response = await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  expect(response.status).toBe(200);
  if ((response.headers.get('content-type') ?? '').startsWith('application/json')) return [(await response.json()) as WireMessage];
  const messages: WireMessage[] = [];
  await within(
    readSse(response.body!, (event) => {
      if (event.data.trim() !== '') messages.push(JSON.parse(event.data) as WireMessage);
      return true;
    }),
    20_000,
    `${name} to answer`,
  );
  return messages;
}

const resultText = (message: WireMessage | undefined) =>
  ((message?.result as { content?: Array<{ text?: string }> } | undefined)?.content ?? [])[0]?.text;

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
