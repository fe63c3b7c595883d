/**
 * Polling (SEP-1699): with `eventStore.pollAfterMs`, the gateway closes a long call's SSE response
 * early; the client resumes with Last-Event-ID and receives every progress notification and the
 * result, as if nothing had happened.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { assertBuilt, Cleanup, connectClient, gatewayConfig, newMarker, stdioServer, textOf, within } from './harness.js';

const cleanup = new Cleanup();
let gateway: RunningGateway;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  assertBuilt();
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = gatewayConfig({ fx: stdioServer(newMarker()) }, { eventStore: { kind: 'memory', pollAfterMs: 300 } });
  gateway = await startGateway({ config, logger: createLogger({ level: 'debug', destination: destination as never }), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterAll(() => cleanup.run());

describe('SSE polling', () => {
  it('closes a long call’s stream early and the client still gets every progress step and the result', async () => {
    const { client } = await connectClient(cleanup, gateway.url, '2025');
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'fx__slow', arguments: { ms: 1500, steps: 5 } },
      { onprogress: (p) => progress.push(p.progress), timeout: 20_000 },
    );
    expect(textOf(result)).toBe('slept 1500ms');
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    // The stream really was closed and resumed: the client came back with GETs.
    expect(lines.filter((l) => l.msg === 'http' && l.http === 'GET' && l.status === 200).length).toBeGreaterThanOrEqual(2);
  });
});
