/**
 * Lists stay fresh for 2026-era clients whichever connection the upstream announced a change on,
 * and their list results promise no more than the upstream did (MCP 2026-07-28, caching).
 *
 * The upstream is the shared-book fixture: its state lives in a file shared by every process,
 * and it announces `resources/list_changed` only on the connection that made the change — so a
 * sessionless list (served from the primary connection's cache) goes stale unless a change on a
 * pooled or a session's own connection drops every cache of the server. Real child processes,
 * a real HTTP fixture on 127.0.0.1, SDK clients of both eras.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnUntilReady } from '../fixtures/spawn-until-ready.js';
import { assertBuilt, Cleanup, collectNotifications, connectClient, ROOT, startTestGateway, textOf, within } from './harness.js';

const BOOK_JS = `${ROOT}dist/test/fixtures/shared-book-server.js`;
const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

function storeFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-book-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'book.json');
}

function stdioBook(store: string, extra: Record<string, unknown> = {}) {
  return { transport: 'stdio', command: process.execPath, args: [BOOK_JS, '--store', store], ...extra };
}

async function httpBook(store: string, publicTtlMs: number): Promise<string> {
  const fixture = await spawnUntilReady(process.execPath, [BOOK_JS, '--store', store, '--http', '--public-ttl', String(publicTtlMs)], {
    label: 'shared book',
    ready: /^FIXTURE_READY (\S+)$/,
  });
  cleanup.add(() => fixture.stop());
  return fixture.match;
}

// The upstreams' resources: the gateway's own (portcullis://customizations, docs/customizations.md) aside.
const entries = async (client: Client) => (await client.listResources()).resources.map((r) => r.uri).filter((uri) => uri !== 'portcullis://customizations').sort();

async function addEntry(client: Client, title: string): Promise<void> {
  expect(textOf(await client.callTool({ name: 'book__add_entry', arguments: { title } }))).toMatch(/^entry \d+$/);
}

/** A 2026-era client listening for resource list changes (`subscriptions/listen`). */
async function listening(client: Client) {
  const changes = collectNotifications(client, 'notifications/resources/list_changed');
  const subscription = await within(client.listen({ resourcesListChanged: true }), 10_000, 'subscriptions/listen');
  cleanup.add(() => subscription.close().catch(() => undefined));
  return changes;
}

describe('2026-era lists after a change on another connection', () => {
  it('shows a change a 2026-era call made on a pooled connection, and tells listeners', async () => {
    const gateway = await startTestGateway(cleanup, { book: stdioBook(storeFile()) });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    expect(await entries(client)).toEqual([]);
    const changes = await listening(client);
    await addEntry(client, 'first');
    expect(await entries(client)).toEqual(['book://entry/1']);
    await changes.waitFor(1);
  }, 60_000);

  it("shows a change a 2025-era session made on its own connection", async () => {
    const gateway = await startTestGateway(cleanup, { book: stdioBook(storeFile()) });
    const modern = (await connectClient(cleanup, gateway.url, '2026')).client;
    expect(await entries(modern)).toEqual([]);
    const changes = await listening(modern);
    const legacy = (await connectClient(cleanup, gateway.url, '2025')).client;
    await addEntry(legacy, 'from a session');
    await addEntry(legacy, 'and another');
    expect(await entries(modern)).toEqual(['book://entry/1', 'book://entry/2']);
    await changes.waitFor(1);
  }, 60_000);
});

describe('2026-era cache hints', () => {
  it("passes on the upstream's public lifetime for a list every caller shares, never a longer one", async () => {
    const url = await httpBook(storeFile(), 60_000);
    const gateway = await startTestGateway(cleanup, { book: { transport: 'streamableHttp', url, allowPrivateNetwork: true, isolation: 'shared' } });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    const result = (await client.listTools()) as unknown as { ttlMs?: number; cacheScope?: string };
    expect(result.cacheScope).toBe('public');
    expect(result.ttlMs).toBeGreaterThan(0);
    expect(result.ttlMs).toBeLessThanOrEqual(60_000);
  }, 60_000);

  it('says private for a list from a per-principal connection, whatever the upstream said', async () => {
    const url = await httpBook(storeFile(), 60_000);
    const gateway = await startTestGateway(cleanup, { book: { transport: 'streamableHttp', url, allowPrivateNetwork: true, isolation: 'principal' } });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    await addEntry(client, 'opens the connection');
    const result = (await client.listResources()) as unknown as { ttlMs?: number; cacheScope?: string };
    expect(result.cacheScope).toBe('private');
  }, 60_000);

  it('promises no lifetime for a 2025-era upstream, which gave none', async () => {
    const gateway = await startTestGateway(cleanup, { book: stdioBook(storeFile(), { isolation: 'shared' }) });
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    const result = (await client.listResources()) as unknown as { ttlMs?: number; cacheScope?: string };
    expect(result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  }, 60_000);
});
