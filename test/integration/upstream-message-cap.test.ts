/**
 * An HTTP upstream's answers are read bounded (policy `limits.maxUpstreamMessageBytes`): a JSON
 * answer or an SSE event over the cap fails that call with a JSON-RPC error naming the server,
 * its connection is reset (the upstream never gets to write the rest), an error page is read
 * only up to 64 KiB, and the gateway goes on serving the same session. Real fixture behind a
 * proxy that streams the big answers, real gateway, real SDK clients of both eras. A stdio
 * upstream's message over the cap fails its call with the same error (its child is replaced).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { Cleanup, connectClient, ERAS, errorOf, httpServer, newMarker, startHttpFixture, startTestGateway, stdioServer, textOf, waitUntil, assertBuilt } from './harness.js';
import { bigText, startOversizeUpstream, type OversizeUpstream } from './harness/oversize-upstream.js';

const CAP = 1024 * 1024;
const perFile = new Cleanup();
const perTest = new Cleanup();
let upstream: OversizeUpstream;
let capped: RunningGateway;
let defaults: RunningGateway;
/** A stdio upstream under a 64 KiB cap. */
let stdioCapped: RunningGateway;
const STDIO_CAP = 64 * 1024;

beforeAll(async () => {
  assertBuilt();
  const fixture = await startHttpFixture();
  perFile.add(() => fixture.stop());
  upstream = await startOversizeUpstream(fixture.match);
  perFile.add(() => upstream.close());
  capped = await startTestGateway(perFile, { big: httpServer(upstream.url) }, { limits: { maxUpstreamMessageBytes: CAP } });
  defaults = await startTestGateway(perFile, { big: httpServer(upstream.url) });
  stdioCapped = await startTestGateway(perFile, { fx: stdioServer(newMarker(), { isolation: 'shared' }) }, { limits: { maxUpstreamMessageBytes: STDIO_CAP } });
});

afterAll(() => perFile.run());

/** The big answer the proxy recorded last, once its connection has closed. */
async function lastAnswerClosed() {
  const answer = upstream.answers.at(-1);
  return waitUntil(() => answer?.finished !== undefined && answer, 'the big answer’s connection to close');
}

describe.each(ERAS)('a %s client calling a tool whose HTTP upstream answers too much', (era) => {
  afterEach(() => perTest.run());

  it.each(['json', 'sse'] as const)('gets UPSTREAM_MESSAGE_TOO_LARGE naming the server for an 8 MiB %s answer, and the connection is reset', async (form) => {
    const { client } = await connectClient(perTest, capped.url, era);
    const error = await errorOf(client.callTool({ name: 'big__echo', arguments: { text: bigText(form, 8 * CAP) } }));
    expect(error.code).toBe(-32001);
    expect(error.message).toContain('upstream "big"');
    expect(error.message).toContain(`larger than ${CAP} bytes`);
    expect(error.data).toMatchObject({ code: 'UPSTREAM_MESSAGE_TOO_LARGE' });
    const answer = await lastAnswerClosed();
    expect(answer.finished).toBe(false);
    expect(answer.written).toBeLessThan(answer.planned);
    // The same session goes on: the next call is answered.
    expect(textOf(await client.callTool({ name: 'big__echo', arguments: { text: 'still here' } }))).toBe('still here');
  });

  it('relays an answer within the cap in full', async () => {
    const { client } = await connectClient(perTest, capped.url, era);
    const result = await client.callTool({ name: 'big__echo', arguments: { text: bigText('sse', CAP / 2) } });
    expect(textOf(result)).toHaveLength(CAP / 2);
  });

  it('reads at most 64 KiB of an error page, resetting the connection, and reports the upstream unavailable', async () => {
    const { client } = await connectClient(perTest, capped.url, era);
    const error = await errorOf(client.callTool({ name: 'big__echo', arguments: { text: bigText('error', 8 * CAP) } }));
    expect(error.code).toBe(-32001);
    expect(error.message).toContain('upstream "big"');
    expect(error.message.length).toBeLessThan(1024);
    const answer = await lastAnswerClosed();
    expect(answer.finished).toBe(false);
  });

  it('applies the default policy’s 16 MiB cap when the config sets none', async () => {
    const { client } = await connectClient(perTest, defaults.url, era);
    const error = await errorOf(client.callTool({ name: 'big__echo', arguments: { text: bigText('json', 24 * CAP) } }));
    expect(error.data).toMatchObject({ code: 'UPSTREAM_MESSAGE_TOO_LARGE' });
    expect(error.message).toContain(`larger than ${16 * CAP} bytes`);
    expect((await lastAnswerClosed()).finished).toBe(false);
  });
});

describe.each(ERAS)('a %s client calling a tool whose stdio upstream answers too much', (era) => {
  afterEach(() => perTest.run());

  it('gets UPSTREAM_MESSAGE_TOO_LARGE naming the server and the cap, not a bare closed connection, and the next call is answered', async () => {
    const { client } = await connectClient(perTest, stdioCapped.url, era);
    const error = await errorOf(client.callTool({ name: 'fx__echo', arguments: { text: 'x'.repeat(2 * STDIO_CAP) } }));
    expect(error.code).toBe(-32001);
    expect(error.message).toBe(`upstream "fx": sent a message larger than ${STDIO_CAP} bytes (limits.maxUpstreamMessageBytes); its connection was reset`);
    expect(error.data).toMatchObject({ code: 'UPSTREAM_MESSAGE_TOO_LARGE' });
    expect(textOf(await client.callTool({ name: 'fx__echo', arguments: { text: 'still here' } }))).toBe('still here');
  });
});
