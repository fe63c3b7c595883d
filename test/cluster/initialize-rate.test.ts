/**
 * The `initialize` rate (`sessions.initializePerMinute`) across replicas: two gateway processes on
 * one real Redis keep each principal's bucket there, as the policy's `rateLimits` do, so a client
 * opening sessions alternately on both replicas spends one bucket, not one per replica. The rate
 * is 2 a minute: the third `initialize`, whichever replica gets it, is refused (nothing here
 * depends on timing — a token comes back only after 30 s).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initializeBody, MCP_POST_HEADERS } from '../integration/harness/raw-http.js';
import { assertBuilt } from '../integration/harness/paths.js';
import { Cleanup } from '../integration/harness/wait.js';
import { assertSharedRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../session/redis-helpers.js';
import { startReplica } from './replicas.js';

const cleanup = new Cleanup();

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
});
afterEach(() => cleanup.run());

async function initialize(url: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: MCP_POST_HEADERS, body: initializeBody() });
  const text = await response.text();
  const sessionId = response.headers.get('mcp-session-id');
  if (sessionId !== null) {
    cleanup.add(async () => {
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } }).catch(() => undefined);
    });
  }
  const json = response.headers.get('content-type')?.startsWith('application/json') === true ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: json };
}

describe('sessions.initializePerMinute with replicas on one Redis', () => {
  it('is one bucket per principal for the cluster: sessions opened alternately on A and B exhaust it', async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const extra = { sessions: { initializePerMinute: 2 } };
    const [a, b] = await Promise.all([startReplica(cleanup, prefix, 'A', extra), startReplica(cleanup, prefix, 'B', extra)]);

    expect((await initialize(a.url)).status).toBe(200);
    expect((await initialize(b.url)).status).toBe(200);
    // Each replica alone would still have a token: only a shared bucket refuses these.
    for (const url of [a.url, b.url]) {
      const refused = await initialize(url);
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(refused.body).toMatchObject({ error: { data: { code: 'RATE_LIMITED' } } });
    }
  }, 60_000);
});
