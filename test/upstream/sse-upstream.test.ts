/**
 * `transport: "sse"` upstreams end to end: a real gateway in front of the fixture served by the
 * SDK 1.x `SSEServerTransport` on 127.0.0.1, reached by SDK v2 clients of both eras over
 * Streamable HTTP. Lists, calls, progress, server→client requests and notifications cross the
 * HTTP+SSE hop; a stream the upstream cuts costs one reconnect and a fresh initialize, never a
 * call sent into a session nobody initialised.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { startSseFixture, type SseFixture } from '../fixtures/sse-fixture.js';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  ERAS,
  sideChannelUrl,
  startTestGateway,
  textOf,
  waitUntil,
} from '../integration/harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let fixture: SseFixture;
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  fixture = await startSseFixture();
  perFile.add(() => fixture.close());
  gateway = await startTestGateway(perFile, {
    // Loopback is a private network: allowed explicitly, as for any loopback upstream.
    legacy: { transport: 'sse', url: fixture.url, allowPrivateNetwork: true },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe.each(ERAS)('an sse upstream for a %s client', (era) => {
  it('lists the upstream’s tools under its namespace and calls one', async () => {
    const { client } = await connectClient(perTest, gateway.url, era);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['legacy__test_simple_text', 'legacy__test_tool_with_progress']));
    const result = await client.callTool({ name: 'legacy__test_simple_text', arguments: {} });
    expect(textOf(result)).toBe('This is a simple text response for testing.');
  });

  it('relays the progress a call reports, in order, under the client’s own token', async () => {
    const { client } = await connectClient(perTest, gateway.url, era);
    const seen: number[] = [];
    await client.callTool({ name: 'legacy__test_tool_with_progress', arguments: {} }, { onprogress: (p) => seen.push(p.progress) });
    expect(seen).toEqual([0, 50, 100]);
  });
});

describe('server→client traffic from an sse upstream (2025 client)', () => {
  it('round-trips an elicitation the upstream asks mid-call', async () => {
    const answer = `elicited-${randomUUID()}`;
    const { client } = await connectClient(perTest, gateway.url, '2025', {
      capabilities: { elicitation: { form: {} } },
      setup: (c) => c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { response: answer } })),
    });
    const result = await client.callTool({ name: 'legacy__test_elicitation', arguments: { message: 'Your name?' } });
    expect(textOf(result)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify({ response: answer })}`);
  });

  it('round-trips a sampling request the upstream asks mid-call', async () => {
    const answer = `sampled-${randomUUID()}`;
    const { client } = await connectClient(perTest, gateway.url, '2025', {
      capabilities: { sampling: {} },
      setup: (c) =>
        c.setRequestHandler('sampling/createMessage', () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: answer } })),
    });
    const result = await client.callTool({ name: 'legacy__test_sampling', arguments: { prompt: 'What is 2+2?' } });
    expect(textOf(result)).toBe(`LLM response: ${answer}`);
  });

  it('relays the log notifications a call sends, in order', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const logs = collectNotifications<{ data: { seq: number } }>(client, 'notifications/message');
    await client.callTool({ name: 'legacy__emit_notifications', arguments: { count: 5 } });
    expect((await logs.waitFor(5)).map((m) => m.data.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('serves the upstream unprefixed on its side channel', async () => {
    const { client } = await connectClient(perTest, sideChannelUrl(gateway.url, 'legacy'), '2025');
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(textOf(result)).toBe('This is a simple text response for testing.');
  });
});

describe('a stream the sse upstream cuts', () => {
  it('closes the connection; the next call initialises a new upstream session instead of posting into a dead one', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await client.callTool({ name: 'legacy__test_simple_text', arguments: {} });
    const before = fixture.opened();
    const initializes = fixture.methods.filter((m) => m === 'initialize').length;
    fixture.cutStreams();
    // The gateway reconnects (the primary eagerly, the session's own link on next use).
    await waitUntil(() => fixture.open() > 0 && fixture.opened() > before, 'a new upstream stream');
    const result = await client.callTool({ name: 'legacy__test_simple_text', arguments: {} });
    expect(textOf(result)).toBe('This is a simple text response for testing.');
    expect(fixture.methods.filter((m) => m === 'initialize').length).toBeGreaterThan(initializes);
  });
});
