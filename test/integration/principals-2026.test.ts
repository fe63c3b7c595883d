/**
 * Two principals on the 2026-07-28 path of a real gateway (bearer auth, real stdio children, the
 * SDK's 2026 client where one fits, raw node:http where the bytes matter):
 * - a listen of a principal whose access rules hide a server never subscribes to that server's
 *   resources, and never hears their updates, while a principal who may see them does;
 * - calls of two principals with the same JSON-RPC id and the same progress token, at once,
 *   each get their own answer and their own progress, nothing of the other's;
 * - listen streams are bounded per principal (512) and per endpoint (1,024): past either the
 *   listen is refused SUBSCRIPTION_LIMIT naming whose bound it met, another principal still
 *   listens while one is at its share, and the operator's log says so.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { WATCHED_URI } from '../fixtures/fixture-resources-prompts.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  gatewayConfig,
  newMarker,
  ROOT,
  stdioServer,
  textOf,
  within,
} from './harness.js';
import { envelope2026, headers2026, messagesOfAnswer, post, request2026, type Exchange } from './harness/raw-2026.js';

const BOOK_JS = `${ROOT}dist/test/fixtures/shared-book-server.js`;
const perFile = new Cleanup();
const perTest = new Cleanup();
/** `ops` is the policy's admin: it reads /metrics and calls nothing. */
const principals = bearerPrincipals('alice', 'bob', 'carol', 'ops');
const logLines: Array<Record<string, unknown>> = [];
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'principals-2026-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const policy = join(dir, 'policy.json');
  writeFileSync(
    policy,
    JSON.stringify({ admins: ['ops'], access: { default: 'allow', rules: [{ name: 'alice-not-sec', principals: ['alice'], effect: 'deny', servers: ['sec'] }] } }),
  );
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) });
  gateway = await startGateway({
    config: gatewayConfig(
      {
        sec: stdioServer(newMarker(), { isolation: 'shared' }),
        // Shared, so a change one principal makes is every listener's news (routing/listens/listen-feed.ts).
        book: { transport: 'stdio', command: process.execPath, args: [BOOK_JS, '--store', join(dir, 'book.json')], isolation: 'shared' },
      },
      { auth: principals.auth, policy },
    ),
    logger,
    env: { ...process.env, ...principals.env },
  });
  perFile.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const as = (name: string) => connectClient(perTest, gateway.url, '2026', { headers: principals.headers(name) }).then((c) => c.client);

async function listen(client: Client, filter: Parameters<Client['listen']>[0]) {
  const subscription = await within(client.listen(filter), 10_000, 'subscriptions/listen');
  perTest.add(() => subscription.close().catch(() => undefined));
  return subscription;
}

describe('a listen of a principal whose access rules hide a server', () => {
  it("never subscribes to that server's resources nor hears their updates; a principal who may see them does", async () => {
    const [alice, bob] = await Promise.all([as('alice'), as('bob')]);
    const aliceUpdates = collectNotifications(alice, 'notifications/resources/updated');
    const aliceLists = collectNotifications(alice, 'notifications/resources/list_changed');
    const bobUpdates = collectNotifications(bob, 'notifications/resources/updated');

    const aliceListen = await listen(alice, { resourcesListChanged: true, resourceSubscriptions: [WATCHED_URI] });
    // Alice cannot see `sec`, the only server offering the URI: her listen does not hold it.
    expect(aliceListen.honoredFilter).toEqual({ resourcesListChanged: true });
    const bobListen = await listen(bob, { resourceSubscriptions: [WATCHED_URI] });
    expect(bobListen.honoredFilter).toEqual({ resourceSubscriptions: [WATCHED_URI] });
    expect(textOf(await bob.callTool({ name: 'sec__touch_resource', arguments: { uri: WATCHED_URI } }))).toBe('notified');
    await bobUpdates.waitFor(1);

    // A change Alice may hear, after Bob's update: had the update reached Alice's stream, it came first.
    expect(textOf(await alice.callTool({ name: 'book__add_entry', arguments: { title: 'after the update' } }))).toMatch(/^entry \d+$/);
    await aliceLists.waitFor(1);
    expect(aliceUpdates.items).toEqual([]);
    // And nothing Alice can do names the hidden server's tool.
    await expect(alice.callTool({ name: 'sec__touch_resource', arguments: { uri: WATCHED_URI } })).rejects.toThrow(/Unknown tool/);
  }, 60_000);
});

describe('calls of two principals with the same id and progress token, at once', () => {
  it('each get their own answer and their own progress, nothing of the other’s', async () => {
    const ROUNDS = 6;
    const exchanges: Array<{ steps: number; text: string; slow: Exchange; echo: Exchange }> = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [who, steps] of [['bob', 2], ['carol', 4]] as const) {
        const auth = principals.headers(who);
        const slowParams = { name: 'sec__slow', arguments: { ms: 40 * steps, steps } };
        const meta = envelope2026({ progressToken: 'same-token' });
        const slow = post(gateway.url, request2026('same-id', 'tools/call', slowParams, meta), { ...headers2026('tools/call', slowParams), ...auth });
        const text = `${who}-${round}`;
        const echoParams = { name: 'sec__echo', arguments: { text } };
        const echo = post(gateway.url, request2026('same-id', 'tools/call', echoParams), { ...headers2026('tools/call', echoParams), ...auth });
        exchanges.push({ steps, text, slow, echo });
      }
    }
    for (const { steps, text, slow, echo } of exchanges) {
      const slowMessages = await messagesOfAnswer(await slow.answer);
      const echoMessages = await messagesOfAnswer(await echo.answer);
      const progress = slowMessages.filter((m) => m.method === 'notifications/progress');
      expect(progress.map((m) => (m.params as { progress: number; total: number }).total)).toEqual(Array(steps).fill(steps));
      expect(slowMessages.at(-1)).toMatchObject({ id: 'same-id', result: { content: [{ text: `slept ${40 * steps}ms` }] } });
      expect(echoMessages).toEqual([expect.objectContaining({ id: 'same-id', result: expect.objectContaining({ content: [{ type: 'text', text }] }) })]);
    }
  }, 60_000);
});

describe('listen streams per principal and per endpoint', () => {
  /** Opens `count` listens of `who` (at most 64 being opened at once); each stays open until the test ends. */
  async function listens(who: string, count: number): Promise<Array<{ status: number; body: () => string }>> {
    const answers: Array<{ status: number; body: () => string }> = [];
    let next = 0;
    const params = { notifications: { toolsListChanged: true } };
    const worker = async () => {
      while (next < count) {
        const n = (next += 1);
        const exchange = post(gateway.url, request2026(`${who}-${n}`, 'subscriptions/listen', params), { ...headers2026('subscriptions/listen'), ...principals.headers(who) });
        perTest.add(() => exchange.hangUp());
        const answer = await exchange.answer;
        if (answer.status === 200) await answer.waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
        else await answer.until(() => answer.ended(), 'the refusal');
        answers.push(answer);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    return answers;
  }

  const refusal = (answer: { body: () => string }) => (JSON.parse(answer.body()) as { error: { code: number; data: Record<string, unknown> } }).error;

  it('refuses a principal past 512, lets another listen, refuses everyone past 1,024, and tells the operator each time', async () => {
    const alice = await listens('alice', 513);
    expect(alice.filter((a) => a.status === 200)).toHaveLength(512);
    const [refused] = alice.filter((a) => a.status !== 200);
    expect(refused!.status).toBe(503);
    expect(refusal(refused!)).toMatchObject({ code: -32001, data: { code: 'SUBSCRIPTION_LIMIT', limit: { scope: 'principal', counts: 'listens', max: 512 } } });

    const bob = await listens('bob', 512);
    expect(bob.every((a) => a.status === 200)).toBe(true);
    const metrics = await (await fetch(new URL('/metrics', gateway.url), { headers: principals.headers('ops') })).text();
    expect(metrics).toMatch(/^portcullis_listen_streams 1024$/m);

    const [carol] = await listens('carol', 1);
    expect(carol!.status).toBe(503);
    expect(refusal(carol!)).toMatchObject({ code: -32001, data: { code: 'SUBSCRIPTION_LIMIT', limit: { scope: 'gateway', counts: 'listens', max: 1024 } } });

    const warned = logLines.filter((line) => String(line.msg).startsWith('listen refused'));
    expect(warned).toEqual([
      expect.objectContaining({ level: 40, principal: 'alice', counts: 'listens', limit: 512 }),
      expect.objectContaining({ level: 40, counts: 'listens', limit: 1024 }),
    ]);
    // No bearer token of anyone in any line the gateway wrote.
    const written = JSON.stringify(logLines);
    for (const who of ['alice', 'bob', 'carol']) expect(written).not.toContain(principals.headers(who).Authorization!.slice('Bearer '.length));
  }, 120_000);
});
