/**
 * `transport: "auto"` (src/upstream/auto-http.ts) against the fixture served over HTTP+SSE only
 * (the SDK 1.x `SSEServerTransport` on 127.0.0.1): the first POST to the URL is answered 404, so
 * the connection falls back to HTTP+SSE where the policy allows it, and fails naming what to set
 * where it does not. NETWORK SAFETY: loopback only.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressDispatcher } from '../../src/net/egress-guard.js';
import { createConnector } from '../../src/upstream/connector.js';
import { UpstreamLink } from '../../src/upstream/link.js';
import { startSseFixture, type SseFixture } from '../fixtures/sse-fixture.js';
import { deps, logger, serverConfigs } from './fixture-link.js';

let fixture: SseFixture;
beforeAll(async () => {
  fixture = await startSseFixture();
});
afterAll(() => fixture.close());

function connect(sseFallbackAllowed: boolean, log = logger): Promise<UpstreamLink> {
  const config = serverConfigs({ old: { transport: 'auto', url: fixture.url, allowPrivateNetwork: true } }).old!;
  const dispatcherFor = () => createEgressDispatcher({ server: 'old', allowPrivateNetwork: true, connectTimeoutMs: 5_000, logger });
  const connector = createConnector('old', config, { ...deps, sseFallbackAllowed, dispatcherFor }, log);
  return UpstreamLink.connect({ server: 'old', transport: connector.transport, negotiation: connector.negotiation, requestTimeoutMs: 10_000, logger: log });
}

describe('an "auto" server', () => {
  it('falls back to HTTP+SSE when the URL answers the Streamable HTTP POST with 404, says so in the log, and serves calls', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }));
    const opened = fixture.opened();
    const link = await connect(true, log);
    try {
      expect(fixture.opened()).toBe(opened + 1);
      const tools = (await link.list('tools')) as { name: string }[];
      expect(tools.map((t) => t.name)).toContain('test_simple_text');
      const chosen = lines.map((line) => JSON.parse(line) as { msg: string; transport?: string; server?: string }).find((l) => l.transport !== undefined);
      expect(chosen).toMatchObject({ server: 'old', transport: 'sse', msg: 'upstream "auto" transport chose HTTP+SSE' });
    } finally {
      await link.close();
    }
  });

  it('does not fall back where the policy forbids HTTP+SSE upstreams, and says what to set', async () => {
    const opened = fixture.opened();
    const error = await connect(false).then(() => new Error('connected'), (e: unknown) => e as Error);
    expect(error.message).toBe(
      'upstream "old": the URL answered HTTP 404 to the MCP handshake: check servers.old.url (a server that speaks only HTTP+SSE needs "transport": "sse", or "auto" to try both)',
    );
    expect(fixture.opened()).toBe(opened);
  });
});
