/**
 * A 2026-07-28 client that hangs up, through a real gateway on 127.0.0.1 in front of a real stdio
 * child whose stdin is recorded: the gateway's own 2026 binding (src/inbound/request-2026.ts,
 * listens-2026.ts) must cancel the upstream request and free what the exchange held, whatever
 * moment the client picks —
 * - a call whose JSON answer is still pending (nothing sent yet);
 * - a call streaming SSE (its progress flowing);
 * - a `subscriptions/listen` stream.
 * "Freed" is measured on the operator's own surface, `/metrics`: `portcullis_calls_in_flight`
 * and `portcullis_listen_streams` go back to 0 after many hang-ups, the stdio children stay within
 * the pool, and the gateway still answers at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { seededRandom } from '../setup/random.js';
import { assertBuilt, Cleanup, newMarker, recordedStdin, recordingStdioServer, startTestGateway, waitUntil, type RecordedMessage } from './harness.js';
import { envelope2026, headers2026, messagesOfAnswer, post, request2026 } from './harness/raw-2026.js';

const cleanup = new Cleanup();
const random = seededRandom('test/integration/hangups-2026.test.ts');
const POOL = 2;
let dir: string;
let stdinLog: string;
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'hangups-2026-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  stdinLog = join(dir, 'stdin.log');
  gateway = await startTestGateway(cleanup, { fx: recordingStdioServer(newMarker(), stdinLog, { isolation: 'shared' }) }, { statelessPool: { maxPerServer: POOL } });
});
afterAll(() => cleanup.run());

/** One gauge of `/metrics` (summed over its series). */
async function gauge(name: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  const lines = text.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
  if (lines.length === 0) throw new Error(`/metrics has no ${name}`);
  return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

let nextMs = 40_000;
/** A `slow` call no other test makes (its `ms` tells it apart on the upstream's stdin). */
function slowCall(id: string, options: { steps: number; progressToken?: string }) {
  const ms = (nextMs += 1);
  const params = { name: 'fx__slow', arguments: { ms, steps: options.steps } };
  const meta = envelope2026(options.progressToken === undefined ? {} : { progressToken: options.progressToken });
  return { ms, exchange: post(gateway.url, request2026(id, 'tools/call', params, meta), headers2026('tools/call', params)) };
}

const reachedUpstream = (ms: number) => () =>
  recordedStdin(stdinLog).find((m) => m.method === 'tools/call' && (m.params?.arguments as { ms?: number } | undefined)?.ms === ms);

const cancelledUpstream = (call: RecordedMessage) => () =>
  recordedStdin(stdinLog).some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call.id);

function listen(id: string) {
  const params = { notifications: { toolsListChanged: true } };
  return post(gateway.url, request2026(id, 'subscriptions/listen', params), headers2026('subscriptions/listen'));
}

describe('a 2026 client that hangs up', () => {
  it('before its JSON answer: the upstream is sent notifications/cancelled for that call', async () => {
    const { ms, exchange } = slowCall('json-1', { steps: 1 });
    const call = await waitUntil(reachedUpstream(ms), 'the call to reach the upstream');
    expect(await gauge('portcullis_calls_in_flight')).toBe(1);
    exchange.hangUp();
    await waitUntil(cancelledUpstream(call), 'notifications/cancelled to reach the upstream');
    await waitUntil(async () => (await gauge('portcullis_calls_in_flight')) === 0, 'the call to leave the gateway');
  });

  it('mid-stream: the SSE answer that carried its progress is the one cut, and the upstream is told', async () => {
    const { ms, exchange } = slowCall('sse-1', { steps: 400, progressToken: 'p-sse-1' });
    const answer = await exchange.answer;
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    const progress = await answer.waitForMessage((m) => m.method === 'notifications/progress', 'the first progress');
    expect((progress.params as { progressToken?: unknown }).progressToken).toBe('p-sse-1');
    const call = await waitUntil(reachedUpstream(ms), 'the call to reach the upstream');
    exchange.hangUp();
    await waitUntil(cancelledUpstream(call), 'notifications/cancelled to reach the upstream');
    await waitUntil(async () => (await gauge('portcullis_calls_in_flight')) === 0, 'the call to leave the gateway');
  });

  it('on a listen: the stream leaves the gateway', async () => {
    const exchange = listen('listen-1');
    const answer = await exchange.answer;
    await answer.waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
    expect(await gauge('portcullis_listen_streams')).toBe(1);
    exchange.hangUp();
    await waitUntil(async () => (await gauge('portcullis_listen_streams')) === 0, 'the listen to leave the gateway');
  });

  it('many times, at random moments: nothing is left behind and the gateway answers at once', async () => {
    const ROUNDS = 24;
    const calls: RecordedMessage[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const kind = round % 3;
      if (kind === 2) {
        const exchange = listen(`many-listen-${round}`);
        if (random.chance(0.5)) await (await exchange.answer).waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged', 'ack');
        exchange.hangUp();
        continue;
      }
      const { ms, exchange } = slowCall(`many-${round}`, kind === 0 ? { steps: 1 } : { steps: 300, progressToken: `p-many-${round}` });
      calls.push(await waitUntil(reachedUpstream(ms), 'the call to reach the upstream'));
      // Hang up right away, or once the answer's head (JSON pending: none yet; SSE: the first progress) is in.
      if (kind === 1 && random.chance(0.5)) await (await exchange.answer).waitForMessage((m) => m.method === 'notifications/progress', 'progress');
      exchange.hangUp();
    }
    for (const call of calls) await waitUntil(cancelledUpstream(call), `notifications/cancelled for upstream request ${String(call.id)}`);
    await waitUntil(async () => (await gauge('portcullis_calls_in_flight')) === 0 && (await gauge('portcullis_listen_streams')) === 0, 'every exchange to leave the gateway');
    // The pool was neither leaked nor grown past its bound by the abandoned calls.
    expect(await gauge('portcullis_stdio_children')).toBeLessThanOrEqual(POOL + 1);
    // And it serves: POOL concurrent calls answered (a leaked lease would keep them waiting).
    const answers = await Promise.all(
      Array.from({ length: POOL }, async (_, i) => {
        const params = { name: 'fx__echo', arguments: { text: `after-${i}` } };
        return messagesOfAnswer(await post(gateway.url, request2026(`after-${i}`, 'tools/call', params), headers2026('tools/call', params)).answer);
      }),
    );
    expect(answers.map((messages) => (messages.at(-1)?.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual(
      Array.from({ length: POOL }, (_, i) => `after-${i}`),
    );
  }, 120_000);
});
