/**
 * Tool deferral through a real gateway in front of ~5,000 real upstream tools (the search
 * benchmark's catalogue served by a child process, one HTTP upstream per server) and the stdio
 * fixture, seen by SDK v2 clients of both eras: the deferred `tools/list`, `search_tools` and
 * `call_tool`, hidden tools staying hidden, `load: true` per 2025 session (and only that
 * session; 2026 callers' loads are deferral-principals.test.ts's), the bounds, the `deferTools` option, and `tools/list` pages over the whole catalogue.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  ERAS,
  errorOf,
  FIXTURE_JS,
  MCP_POST_HEADERS,
  messagesOf,
  rawRequest,
  startCatalogueUpstream,
  textOf,
  waitUntil,
  within,
  type CatalogueUpstream,
  type Era,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let catalogue: CatalogueUpstream;
/**
 * Deferred above 200 tools; slack pinned direct, one github tool pinned, a disabled and a
 * policy-denied tool, 3 loads per session, `tools/list` in pages of 500. One gateway: ~100
 * upstreams per gateway is what a shared test machine can start within the handshake bound.
 */
let deferred: RunningGateway;

async function gateway(raw: Record<string, unknown>, dir: string): Promise<RunningGateway> {
  const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, { baseDir: dir });
  const running = await startGateway({ config, logger: silentLogger(), env: process.env });
  perFile.add(() => within(running.close(), 20_000, 'gateway close'));
  return running;
}

beforeAll(async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-deferral-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'deny.json'), JSON.stringify({ deniedTools: ['filesystem__write_file'] }));
  catalogue = await startCatalogueUpstream(perFile);
  const fx = { transport: 'stdio', command: process.execPath, args: [FIXTURE_JS, '--stdio'], isolation: 'shared' };
  deferred = await gateway(
    {
      policy: './deny.json',
      catalogue: { deferTools: { above: 200 }, maxLoadedTools: 3, pageSize: 500 },
      servers: {
        ...catalogue.servers({
          slack: { defer: false },
          github: { alwaysLoad: ['create_pull_request'] },
          memory: { disabledTools: ['delete_entities'] },
        }),
        fx,
      },
    },
    dir,
  );
}, 180_000);
afterEach(() => perTest.run());
afterAll(() => perFile.run(), 60_000);

interface Match {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: string; properties?: Record<string, unknown> };
}
interface SearchResult {
  tools: Match[];
  loaded?: string[];
  dropped?: string[];
}

const search = async (client: Client, args: Record<string, unknown>): Promise<SearchResult> => {
  const result = await client.callTool({ name: 'search_tools', arguments: args });
  expect(result.isError).toBeFalsy();
  return result.structuredContent as unknown as SearchResult;
};
const names = async (client: Client, query: string, extra: Record<string, unknown> = {}) =>
  (await search(client, { query, ...extra })).tools.map((tool) => tool.name);
const listed = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
const masked = (error: { code?: number; message: string; data?: unknown }, name: string) => ({ ...error, message: error.message.split(name).join('<tool>') });

describe.each(ERAS)('a %s client behind the deferred gateway', (era: Era) => {
  it('lists the two meta-tools, the pinned server and the pinned tool instead of ~5,000 tools', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const { tools } = await client.listTools();
    const slack = tools.filter((tool) => tool.name.startsWith('slack__'));
    expect(tools.slice(0, 2).map((tool) => tool.name)).toEqual(['search_tools', 'call_tool']);
    expect(slack).toHaveLength(8);
    const pinned = tools.find((tool) => tool.name === 'github__create_pull_request');
    expect(pinned?._meta).toEqual({ 'anthropic/alwaysLoad': true });
    expect(tools).toHaveLength(2 + slack.length + 1);
    const schema = tools[0]?.inputSchema as { properties: Record<string, unknown>; required: string[] };
    expect(schema.required).toEqual(['query']);
    // Both eras may load: a 2025 session into itself, a 2026 caller into its principal's set.
    expect('load' in schema.properties).toBe(true);
  });

  it('ranks a tool first for its own name and for a paraphrase of what it does', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    expect((await names(client, 'postgres__query'))[0]).toBe('postgres__query');
    expect((await names(client, 'run a read-only SQL query against postgres'))[0]).toBe('postgres__query');
    expect((await names(client, 'get directions between two places on google maps'))[0]).toBe('maps__maps_directions');
    const [best] = (await search(client, { query: 'add an observation to an entity in the knowledge graph', limit: 1 })).tools;
    expect(best?.name).toBe('memory__add_observations');
    expect(best?.description).toMatch(/observations/i);
    expect(best?.inputSchema.properties).toHaveProperty('observations');
  });

  it('keeps to the server asked for and to the limit', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const hits = await names(client, 'create a pull request', { server: 'gitlab', limit: 7 });
    expect(hits).toHaveLength(7);
    expect(hits.every((name) => name.startsWith('gitlab__'))).toBe(true);
    expect(await names(client, 'create a pull request', { server: 'no-such-server' })).toEqual([]);
  });

  it('calls a deferred tool through call_tool, and directly by the name search gave', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const via = await client.callTool({ name: 'call_tool', arguments: { name: 'postgres__query', arguments: { sql: 'select 1' } } });
    expect(textOf(via)).toBe('postgres/query {"sql":"select 1"}');
    const direct = await client.callTool({ name: 'maps__maps_directions', arguments: { origin: 'a', destination: 'b' } });
    expect(textOf(direct)).toBe('maps/maps_directions {"origin":"a","destination":"b"}');
  });

  it('never shows a disabled or policy-denied tool in search, and call_tool answers for it exactly like an unknown tool', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const writeHits = await names(client, 'write text into a file', { limit: 20 });
    expect(writeHits).not.toContain('filesystem__write_file');
    expect(writeHits).toContain('filesystem__edit_file');
    expect(await names(client, 'filesystem__write_file', { limit: 20 })).not.toContain('filesystem__write_file');
    expect(await names(client, 'delete entities from the knowledge graph', { limit: 20 })).not.toContain('memory__delete_entities');

    const unknown = await errorOf(client.callTool({ name: 'call_tool', arguments: { name: 'memory__no_such_tool', arguments: {} } }));
    for (const hidden of ['filesystem__write_file', 'memory__delete_entities']) {
      const refused = await errorOf(client.callTool({ name: 'call_tool', arguments: { name: hidden, arguments: {} } }));
      expect(masked(refused, hidden)).toEqual(masked(unknown, 'memory__no_such_tool'));
      const direct = await errorOf(client.callTool({ name: hidden, arguments: {} }));
      expect(masked(direct, hidden)).toEqual(masked(unknown, 'memory__no_such_tool'));
    }
    // call_tool is no way around itself: the meta-tools are not upstream tools.
    const nested = await errorOf(client.callTool({ name: 'call_tool', arguments: { name: 'search_tools', arguments: { query: 'x' } } }));
    expect(masked(nested, 'search_tools')).toEqual(masked(unknown, 'memory__no_such_tool'));
  });

  it('refuses an oversized query, a limit above 20 and unknown arguments with -32602', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const long = await errorOf(client.callTool({ name: 'search_tools', arguments: { query: 'a'.repeat(1_001) } }));
    expect(long.code).toBe(-32602);
    expect(long.message).toContain('at most 1000 characters');
    expect((await errorOf(client.callTool({ name: 'search_tools', arguments: { query: 'file', limit: 21 } }))).code).toBe(-32602);
    expect((await errorOf(client.callTool({ name: 'search_tools', arguments: { query: 'file', extra: 1 } }))).code).toBe(-32602);
    expect((await errorOf(client.callTool({ name: 'call_tool', arguments: { name: 'postgres__query', arguments: [1] } }))).code).toBe(-32602);
    // The gateway is still fine.
    expect((await names(client, 'postgres__query'))[0]).toBe('postgres__query');
  });

  it('finds a tool an upstream adds once it announces list_changed', async () => {
    const { client } = await connectClient(perTest, deferred.url, era);
    const before = await names(client, 'fx__toggled_tool', { server: 'fx' });
    const toggledOn = !before.includes('fx__toggled_tool');
    await client.callTool({ name: 'call_tool', arguments: { name: 'fx__toggle_tool', arguments: {} } });
    // The index follows the upstream's list asynchronously and no message tells a client when: polled.
    const after = await waitUntil(
      async () => {
        const hits = await names(client, 'fx__toggled_tool', { server: 'fx' });
        return hits.includes('fx__toggled_tool') === toggledOn && hits;
      },
      'the index to follow list_changed',
      10_000,
    );
    expect(after.includes('fx__toggled_tool')).toBe(toggledOn);
  });
});

describe('load: true for 2025-era sessions', () => {
  it('adds the matches to that session\'s tools/list, announced with list_changed', async () => {
    const { client } = await connectClient(perTest, deferred.url, '2025');
    const changes = collectNotifications(client, 'notifications/tools/list_changed');
    const result = await search(client, { query: 'run a read-only SQL query against postgres', limit: 2, load: true });
    expect(result.loaded).toEqual(result.tools.map((tool) => tool.name));
    await changes.waitFor(1);
    const now = await listed(client);
    for (const name of result.loaded ?? []) expect(now).toContain(name);
    expect(textOf(await client.callTool({ name: 'postgres__query', arguments: { sql: 'select 2' } }))).toBe('postgres/query {"sql":"select 2"}');
  });

  it('never lets one session\'s loaded tools into another session\'s list', async () => {
    const a = await connectClient(perTest, deferred.url, '2025');
    const b = await connectClient(perTest, deferred.url, '2025');
    const modern = await connectClient(perTest, deferred.url, '2026');
    const baseline = await listed(b.client);
    const { loaded } = await search(a.client, { query: 'take a screenshot of the page in the browser', limit: 3, load: true });
    expect(loaded?.length).toBeGreaterThan(0);
    for (const name of loaded ?? []) expect(await listed(a.client)).toContain(name);
    expect(await listed(b.client)).toEqual(baseline);
    expect(await listed(modern.client)).toEqual(baseline);
    // A fresh session starts with nothing loaded.
    const c = await connectClient(perTest, deferred.url, '2025');
    expect(await listed(c.client)).toEqual(baseline);
  });

  it('keeps at most maxLoadedTools per session, dropping the oldest first', async () => {
    const { client } = await connectClient(perTest, deferred.url, '2025');
    const baseline = (await listed(client)).length;
    const first = await search(client, { query: 'memory__add_observations', limit: 1, load: true });
    expect(first.loaded).toEqual(['memory__add_observations']);
    const second = await search(client, { query: 'send an email', limit: 5, load: true });
    expect(second.dropped).toContain('memory__add_observations');
    const now = await listed(client);
    expect(now).toHaveLength(baseline + 3);
    expect(now).not.toContain('memory__add_observations');
  });
});

/** A 2025 session opened with raw HTTP, its `initialize` carrying `_meta["portcullis/options"]`. */
async function rawSessionWithOption(url: string, options: unknown) {
  const init = await rawRequest(url, {
    headers: { ...MCP_POST_HEADERS },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' }, _meta: { 'portcullis/options': options } },
    }),
  });
  const id = init.headers['mcp-session-id'];
  if (typeof id !== 'string') return { init, list: undefined };
  const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  perTest.add(() => rawRequest(url, { method: 'DELETE', headers: { 'mcp-session-id': id } }).then(() => undefined));
  await rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  let next = 2;
  const list = async (cursor?: string) => {
    const params = cursor === undefined ? {} : { cursor };
    const answer = messagesOf(await rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: next++, method: 'tools/list', params }) }))[0];
    return answer as { result?: { tools: Array<{ name: string }>; nextCursor?: string }; error?: { code: number; message: string } };
  };
  return { init, list };
}

/** Every page of a list, following nextCursor (bounded), and how many pages it took. */
async function allPages(page: (cursor?: string) => Promise<{ tools: Array<{ name: string }>; nextCursor?: string }>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await page(cursor);
    expect(answer.tools.length).toBeLessThanOrEqual(500);
    seen.push(...answer.tools.map((tool) => tool.name));
    cursor = answer.nextCursor;
    pages += 1;
  } while (cursor !== undefined && pages < 100);
  expect(cursor).toBeUndefined();
  return { seen, pages };
}

const OFF = { _meta: { 'portcullis/options': { deferTools: false } } };

describe('the deferTools init option', () => {
  it('defers everything for a 2025 session that asks, leaving at most 3 tools in its list', async () => {
    // A side channel: one server (7 tools), nothing pinned, not deferred by the global rule.
    const { list } = await rawSessionWithOption(`${deferred.url}/servers/maps`, { deferTools: true });
    expect((await list!()).result?.tools.map((tool) => tool.name)).toEqual(['search_tools', 'call_tool']);
  });

  it('lists everything directly, in pages, for a 2025 session that asks for deferral off', async () => {
    const { list } = await rawSessionWithOption(deferred.url, { deferTools: false });
    const { seen, pages } = await allPages(async (cursor) => (await list!(cursor)).result!);
    expect(seen.length).toBeGreaterThan(5_000);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBe(Math.ceil(seen.length / 500));
    expect(seen).not.toContain('search_tools');
    expect(seen).not.toContain('filesystem__write_file');
  });

  it('refuses an initialize whose deferTools is not a boolean with -32602 naming it', async () => {
    const { init, list } = await rawSessionWithOption(deferred.url, { deferTools: 'yes' });
    expect(list).toBeUndefined();
    expect(init.status).toBe(400);
    expect(init.json().error).toMatchObject({ code: -32602 });
    expect(init.json().error?.message).toContain('deferTools');
  });

  it('follows the option per request for a 2026 client that sends it in _meta', async () => {
    const { client } = await connectClient(perTest, deferred.url, '2026');
    const first = await firstPage(client, OFF);
    expect(first.tools).toHaveLength(500);
    expect(first.tools.map((tool) => tool.name)).not.toContain('search_tools');
    const refused = await errorOf(firstPage(client, { _meta: { 'portcullis/options': { deferTools: 1 } } }));
    expect(refused.code).toBe(-32602);
    // Without the option, the same client sees the gateway's default: deferred.
    expect((await firstPage(client)).tools.map((tool) => tool.name).slice(0, 2)).toEqual(['search_tools', 'call_tool']);
  });
});

/** One `tools/list` page as sent (the SDK's `listTools()` without a cursor follows every page itself). */
const firstPage = (client: Client, params: Record<string, unknown> = {}) =>
  client.request({ method: 'tools/list', params }) as Promise<{ tools: Array<{ name: string }>; nextCursor?: string }>;

describe('tools/list pages for a 2026 client', () => {
  it('round-trips the whole 5,000-tool catalogue through nextCursor, each tool once', async () => {
    const { client } = await connectClient(perTest, deferred.url, '2026');
    const { seen, pages } = await allPages((cursor) => firstPage(client, cursor === undefined ? OFF : { ...OFF, cursor }));
    expect(seen.length).toBeGreaterThan(5_000);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBe(Math.ceil(seen.length / 500));
    // The SDK's own listTools() follows the cursors to the same list.
    expect((await client.listTools(OFF)).tools.map((tool) => tool.name)).toEqual(seen);
  });

  it('refuses a forged or foreign cursor with -32602', async () => {
    const { client } = await connectClient(perTest, deferred.url, '2026');
    const cursor = (await firstPage(client, OFF)).nextCursor as string;
    const [offset, print] = cursor.split('.');
    for (const forged of ['not-a-cursor', `zzzzzz.${print}`, `${offset}.AAAAAAAAAAAAAAAA`, 'x'.repeat(5_000)]) {
      expect((await errorOf(firstPage(client, { ...OFF, cursor: forged }))).code).toBe(-32602);
    }
    // The deferred list (one page) is another list: this cursor is not its own.
    expect((await errorOf(firstPage(client, { cursor }))).code).toBe(-32602);
  });
});
