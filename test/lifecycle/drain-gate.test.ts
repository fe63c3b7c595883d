/**
 * The drain gate on its own: what it refuses once draining, what still passes, how it counts
 * calls in flight (an SSE answer counts until its body ends), and that it can end open streams.
 */
import { describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/lifecycle/drain-gate.js';

const post = (headers: Record<string, string> = {}) => new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: '{}' });
const get = (path: string) => new Request(`http://127.0.0.1${path}`);

/** An SSE answer whose body stays open until `end` is called. */
function openStream(): { response: Response; end: () => void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }), end: () => controller.close() };
}

describe('DrainGate', () => {
  it('passes everything before draining and refuses new requests after, with 503 -32001 and Connection: close', async () => {
    const gate = new DrainGate();
    const handler = gate.wrap(() => new Response('{}', { headers: { 'content-type': 'application/json' } }));
    expect((await handler(post(), undefined)).status).toBe(200);
    gate.begin();
    const refused = await handler(post(), undefined);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('connection')).toBe('close');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ id: null, error: { code: -32001, data: { code: 'SHUTTING_DOWN' } } });
    expect((await handler(get('/mcp'), undefined)).status).toBe(503);
    expect((await handler(get('/readyz'), undefined)).status).toBe(503);
  });

  it('still passes liveness and a session’s POST and DELETE while draining', async () => {
    const gate = new DrainGate();
    const handler = gate.wrap(() => new Response(null, { status: 202 }));
    gate.begin();
    expect((await handler(get('/healthz'), undefined)).status).toBe(202);
    expect((await handler(post({ 'mcp-session-id': 'abc' }), undefined)).status).toBe(202);
    const del = new Request('http://127.0.0.1/mcp', { method: 'DELETE', headers: { 'mcp-session-id': 'abc' } });
    expect((await handler(del, undefined)).status).toBe(202);
  });

  it('counts a POST as in flight until its SSE answer ends, and settles then', async () => {
    const gate = new DrainGate();
    const { response, end } = openStream();
    const handler = gate.wrap(() => response);
    const answer = await handler(post(), undefined);
    expect(gate.inFlight).toBe(1);
    gate.begin();
    const settled = gate.settled(60_000);
    const reader = answer.body!.getReader();
    end();
    expect((await reader.read()).done).toBe(true);
    expect(await settled).toBe(true);
    expect(gate.inFlight).toBe(0);
  });

  it('does not count a GET stream or a 2026 listen stream as a call, and ends both on closeStreams', async () => {
    const gate = new DrainGate();
    const streams = [openStream(), openStream()];
    let next = 0;
    const handler = gate.wrap(() => streams[next++]!.response);
    const standalone = await handler(get('/mcp'), undefined);
    const listen = await handler(post({ 'mcp-method': 'subscriptions/listen' }), undefined);
    expect(gate.inFlight).toBe(0);
    expect(gate.openStreams).toBe(2);
    expect(await gate.settled(60_000)).toBe(true);
    expect(gate.closeStreams()).toBe(2);
    expect((await standalone.body!.getReader().read()).done).toBe(true);
    expect((await listen.body!.getReader().read()).done).toBe(true);
    expect(gate.openStreams).toBe(0);
  });

  it('reports an unfinished call when the deadline passes first', async () => {
    const gate = new DrainGate();
    const { response } = openStream();
    const answer = await gate.wrap(() => response)(post(), undefined);
    gate.begin();
    expect(await gate.settled(1)).toBe(false);
    expect(gate.inFlight).toBe(1);
    expect(gate.closeStreams()).toBe(1);
    expect(gate.inFlight).toBe(0);
    expect((await answer.body!.getReader().read()).done).toBe(true);
  });

  it('releases the count when the client hangs up on the stream', async () => {
    const gate = new DrainGate();
    const { response } = openStream();
    const answer = await gate.wrap(() => response)(post(), undefined);
    await answer.body!.cancel();
    expect(gate.inFlight).toBe(0);
    expect(gate.openStreams).toBe(0);
  });
});
