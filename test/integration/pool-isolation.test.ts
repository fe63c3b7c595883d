/**
 * Nothing of principal A ever reaches principal B through a pooled upstream connection
 * (docs/architecture.md, "Attribution"). Two bearer principals call a careless upstream — its
 * `chatty` tool keeps notifying, and elicits, after the client hung up — through a gateway whose
 * pool holds one connection per server, so the next call is served on the very connection the
 * hung-up call used unless the gateway holds it back. What reached each upstream is read from
 * the recorded stdin (stdio) and the recording proxy (HTTP).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  type Era,
  errorOf,
  isAlive,
  type RecordedMessage,
  recordedStdin,
  startGatewayFor,
  startUpstreams,
  textOf,
  UPSTREAM_KINDS,
  type UpstreamKind,
  type Upstreams,
  waitUntil,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals('alice', 'bob');
let upstreams: Upstreams;
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  upstreams = await startUpstreams(perFile);
  // Pooled 2026 connections and 2025 sessions' own ones are what this file tests: `session` isolation.
  gateway = await startGatewayFor(perFile, principals, upstreams.servers({ stdio: { isolation: 'session' }, http: { isolation: 'session' } }), { statelessPool: { maxPerServer: 1 } });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

interface ChattyLog {
  data: { tag: string; seq: number };
}

interface Principal {
  client: Client;
  /** Elicitations this principal's client was asked to answer. */
  asked: Array<{ message?: string }>;
  logs: ReturnType<typeof collectNotifications<ChattyLog>>;
}

/** A client of `name` that answers every elicitation with its own name, recording what it was asked. */
async function as(name: string, era: Era = '2026'): Promise<Principal> {
  const asked: Array<{ message?: string }> = [];
  const { client } = await connectClient(perTest, gateway.url, era, {
    headers: principals.headers(name),
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (request) => {
        asked.push(request.params as { message?: string });
        return { action: 'accept', content: { answer: name, response: name } };
      }),
  });
  return { client, asked, logs: collectNotifications<ChattyLog>(client, 'notifications/message') };
}

/** Starts a `chatty` call, waits until the upstream is streaming it, and hangs up. */
async function hangUpDuring(who: Principal, server: string, args: Record<string, unknown>): Promise<void> {
  const controller = new AbortController();
  const call = who.client.callTool({ name: `${server}__chatty`, arguments: args }, { signal: controller.signal });
  await who.logs.waitFor(1, 20_000);
  controller.abort();
  expect((await errorOf(call)).message).toMatch(/abort/i);
}

function reached(server: UpstreamKind): RecordedMessage[] {
  return server === 'http' ? upstreams.proxy.messages : recordedStdin(upstreams.stdinLog);
}

/** The `tools/call` that reached `server` for the chatty call tagged `tag`. */
function upstreamCallTagged(server: UpstreamKind, tag: string): RecordedMessage | undefined {
  return reached(server).find((m) => m.method === 'tools/call' && (m.params?.arguments as { tag?: unknown } | undefined)?.tag === tag);
}

async function processInfo(who: Principal, server: string): Promise<{ pid: number; activeChattyCalls: number }> {
  return JSON.parse(textOf(await who.client.callTool({ name: `${server}__process_info`, arguments: {} }))) as {
    pid: number;
    activeChattyCalls: number;
  };
}

const looseResult = z.looseObject({});

describe('a 2026-era call hung up on its pooled connection', () => {
  it.each(UPSTREAM_KINDS)('is cancelled on the %s upstream, and none of its notifications reach the next principal', async (server) => {
    const alice = await as('alice');
    const bob = await as('bob');
    const aliceTag = `alice-${randomUUID()}`;
    await hangUpDuring(alice, server, { tag: aliceTag, count: 3_000, intervalMs: 1 });

    const bobTag = `bob-${randomUUID()}`;
    const result = await bob.client.callTool({ name: `${server}__chatty`, arguments: { tag: bobTag, count: 40, intervalMs: 10 } });
    expect(textOf(result)).toBe(`chatty ${bobTag} sent 40`);
    await bob.logs.waitFor(40);
    expect(bob.logs.items.filter((m) => m.data.tag !== bobTag)).toEqual([]);
    expect(bob.logs.items.map((m) => m.data.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));

    // 2025-era upstreams are told with notifications/cancelled; 2026-era ones by the request's stream being aborted.
    const upstreamCall = upstreamCallTagged(server, aliceTag);
    expect(upstreamCall).toBeDefined();
    await waitUntil(
      () =>
        upstreamCall!.abortedByClient ||
        reached(server).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === upstreamCall!.id),
      `cancellation of the hung-up ${server} call reaching the upstream`,
    );
  });

  it('never hands its later elicitation to the next principal as that call’s input_required', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const aliceTag = `alice-${randomUUID()}`;
    await hangUpDuring(alice, 'stdio', { tag: aliceTag, count: 1, elicitAfterMs: 400 });

    const result = await bob.client.callTool({ name: 'stdio__slow', arguments: { ms: 1_500, steps: 3 } });
    expect(textOf(result)).toBe('slept 1500ms');
    expect(bob.asked).toEqual([]);
    expect(alice.asked).toEqual([]);
  });

  it('serves the next principal on a fresh stdio connection when the upstream never answers the cancelled call', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const before = await processInfo(alice, 'stdio');
    await hangUpDuring(alice, 'stdio', { tag: `alice-${randomUUID()}`, count: 3_000, intervalMs: 1 });

    const after = await processInfo(bob, 'stdio');
    expect(after.pid).not.toBe(before.pid);
    expect(after.activeChattyCalls).toBe(0);
    // The connection was replaced, not leaked: its child is gone.
    await waitUntil(() => !isAlive(before.pid), 'the replaced stdio child to exit', 15_000);
  });
});

describe('calls suspended for input (input_required)', () => {
  it('resume only for the principal that started them', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const params = { name: 'stdio__test_elicitation', arguments: { message: `alice-only-${randomUUID()}` } };
    const first = await alice.client.request({ method: 'tools/call', params }, looseResult, { allowInputRequired: true });
    expect(first.resultType).toBe('input_required');
    const state = first.requestState as string;
    const [key] = Object.keys(first.inputRequests as Record<string, unknown>);
    const answer = (response: string) => ({ [key!]: { action: 'accept', content: { response } } });

    const stolen = await errorOf(
      bob.client.request({ method: 'tools/call', params: { ...params, inputResponses: answer('bob'), requestState: state } }, looseResult, {
        allowInputRequired: true,
      }),
    );
    expect(stolen.message).toMatch(/requestState is unknown or expired/);

    const resumed = await alice.client.request(
      { method: 'tools/call', params: { ...params, inputResponses: answer('alice'), requestState: state } },
      looseResult,
      { allowInputRequired: true },
    );
    expect(textOf(resumed)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify({ response: 'alice' })}`);
  });
});

describe('a 2025-era session’s own connection', () => {
  it('sends a hung-up call’s late notifications to that session only, never to another principal', async () => {
    const alice = await as('alice', '2025');
    const bob = await as('bob');
    const aliceTag = `alice-${randomUUID()}`;
    await hangUpDuring(alice, 'stdio', { tag: aliceTag, count: 200, intervalMs: 5 });

    const bobTag = `bob-${randomUUID()}`;
    await bob.client.callTool({ name: 'stdio__chatty', arguments: { tag: bobTag, count: 20, intervalMs: 20 } });
    await bob.logs.waitFor(20);
    expect(bob.logs.items.filter((m) => m.data.tag !== bobTag)).toEqual([]);
    // What the session's connection sends for no open call goes to the session's own stream.
    await waitUntil(() => alice.logs.items.length > 1, 'late notifications on the session’s standalone stream', 15_000);
    expect(new Set(alice.logs.items.map((m) => m.data.tag))).toEqual(new Set([aliceTag]));
  });
});
