/**
 * A hostile stdio upstream floods a 2026-07-28 call with progress (test/fixtures/flood-server.ts:
 * 3,000 notifications of 32 KiB, ~96 MiB, as fast as the pipe takes them, deaf to cancellation)
 * while the client reads nothing. The gateway holds at most 32 MiB unread for the call's SSE
 * answer (sse-writer.ts `MAX_UNREAD_BYTES`), then cuts the answer and cancels the call upstream;
 * what the client can still read is bounded by that, never the flood's size, and the gateway
 * holds no call after. A client that reads gets every notification and the result.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { MAX_UNREAD_BYTES } from '../../src/inbound/sse-writer.js';
import { assertBuilt, Cleanup, ROOT, startTestGateway, waitUntil, within } from './harness.js';
import { envelope2026, headers2026, messagesOfAnswer, post, request2026 } from './harness/raw-2026.js';

const FLOOD_JS = `${ROOT}dist/test/fixtures/flood-server.js`;
const cleanup = new Cleanup();
let dir: string;
let upstreamLog: string;
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'flood-2026-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  upstreamLog = join(dir, 'upstream.log');
  gateway = await startTestGateway(cleanup, { flood: { transport: 'stdio', command: process.execPath, args: [FLOOD_JS, '--log', upstreamLog], isolation: 'shared' } });
});
afterAll(() => cleanup.run());

function upstreamSaw(): Array<{ method?: string; id?: unknown; params?: Record<string, unknown> }> {
  try {
    return readFileSync(upstreamLog, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { method?: string });
  } catch {
    return [];
  }
}

async function callsInFlight(): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  return Number(/^portcullis_calls_in_flight (\d+)$/m.exec(text)?.[1]);
}

const COUNT = 3_000;
const BYTES = 32 * 1024;

describe('a progress flood on a 2026 call', () => {
  it('is cut at the unread bound for a client that reads nothing, and the call is cancelled upstream', async () => {
    const params = { name: 'flood__flood', arguments: { count: COUNT, bytes: BYTES } };
    const body = JSON.stringify(request2026('flood-1', 'tools/call', params, envelope2026({ progressToken: 'f' })));
    const target = new URL(gateway.url);
    const req = httpRequest({ host: '127.0.0.1', port: target.port, path: target.pathname, method: 'POST', headers: headers2026('tools/call', params), agent: false });
    cleanup.add(() => req.destroy());
    // The answer's head, then nothing read: the body waits in the gateway and the sockets.
    const res = await within(new Promise<IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject).end(body)), 15_000, 'the answer head');
    res.pause();
    expect(res.headers['content-type']).toBe('text/event-stream');
    const call = await waitUntil(() => upstreamSaw().find((m) => m.method === 'tools/call'), 'the call to reach the upstream');
    await waitUntil(
      () => upstreamSaw().some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === call.id),
      'the gateway to cut the unread answer and cancel the call upstream',
      30_000,
    );
    await waitUntil(async () => (await callsInFlight()) === 0, 'the call to leave the gateway');
    // What the client can still read: what the gateway held (the bound) and the sockets' buffers.
    let read = 0;
    let resultSeen = false;
    res.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (chunk.includes('"result"')) resultSeen = true;
    });
    res.resume();
    await within(new Promise<void>((resolve) => res.on('close', () => resolve())), 30_000, 'the cut answer to end');
    expect(resultSeen).toBe(false);
    expect(read).toBeLessThan(MAX_UNREAD_BYTES + 16 * 1024 * 1024);
    expect(read).toBeLessThan(COUNT * BYTES);
  }, 90_000);

  it('reaches a client that reads, every notification and the result', async () => {
    const params = { name: 'flood__flood', arguments: { count: 500, bytes: 1024 } };
    const messages = await messagesOfAnswer(await post(gateway.url, request2026('flood-2', 'tools/call', params, envelope2026({ progressToken: 'g' })), headers2026('tools/call', params)).answer);
    expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(500);
    expect(messages.at(-1)).toMatchObject({ id: 'flood-2', result: { content: [{ text: 'flooded 500' }] } });
  }, 60_000);
});
