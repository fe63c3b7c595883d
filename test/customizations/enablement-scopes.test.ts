/**
 * Enablement scopes through a real gateway on 127.0.0.1 with real stdio upstreams and SDK v2
 * clients: the three scopes in their wire order, inheritance and what is stored, two sessions
 * that never see each other's decisions, the list a session's client reads before and after its
 * own toggle, the `portcullis://customizations` resource, and a plugin that disables its children.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { passThroughResult } from '../../demo/lib/pass-through-result.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { collectNotifications, connectClient, errorOf, textOf } from '../integration/harness/clients.js';
import { initializeBody, MCP_POST_HEADERS, messagesOf, rawRequest } from '../integration/harness/raw-http.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { find, listOf, markedServer, toggleOk, type Item } from './enablement-helpers.js';
import { startPluginGateway, whereamiEntry, writePlugin } from './plugin-test-gateway.js';
import { openWatch } from './watch-reader.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
const session = (id: string | undefined) => ({ 'mcp-session-id': id! });

async function twoServers(extra: Record<string, unknown> = {}) {
  const alpha = markedServer({ enabled: false, ...extra });
  const beta = markedServer(extra);
  const started = await startPluginGateway(cleanup, { servers: { alpha: alpha.entry, beta: beta.entry } });
  return { ...started, url: started.gateway.url };
}

describe('enablement scopes', () => {
  it('sorts session, workspace, global, inherits downwards, and stores only what differs', async () => {
    const { url, stateDir } = await twoServers();
    let items = await listOf(url);
    // The config's enabled: false is the operator's global decision.
    expect(find(items, 'alpha')).toMatchObject({ enablement: [{ kind: 'global', enabled: false }], state: { kind: 'stopped' } });
    expect(find(items, 'beta').enablement).toBeUndefined();
    const alphaId = find(items, 'alpha').id as string;
    const betaId = find(items, 'beta').id as string;

    // Global: enabling what the config disabled is a decision of its own (stored), and starts it.
    items = await toggleOk(url, { id: alphaId, enabled: true, scope: 'global' });
    expect(find(items, 'alpha').enablement).toEqual([{ kind: 'global', enabled: true }]);
    expect(find(items, 'alpha').state).toEqual({ kind: 'starting' });

    // A client whose first root is file:///ws1: that is its session's workspace.
    const roots = [{ uri: 'file:///ws1', name: 'ws1' }];
    const { client, transport } = await connectClient(cleanup, url, '2025', {
      capabilities: { roots: {} },
      setup: (c) => c.setRequestHandler('roots/list', () => ({ roots })),
    });
    const listChanged = collectNotifications(client, 'notifications/tools/list_changed');
    const mine = session(transport.sessionId);

    // Workspace: beta disabled in ws1; the session learns ws1 from its roots and hears its list changed.
    items = await toggleOk(url, { id: betaId, enabled: false, scope: 'workspace', workspace: 'file:///ws1' });
    expect(find(items, 'beta').enablement).toEqual([{ kind: 'workspace', uri: 'file:///ws1', enabled: false }]);
    await listChanged.waitFor(1);
    await waitUntil(async () => find(await listOf(url, mine), 'beta').enablement?.length === 1, 'session in ws1');
    expect(await toolNames(client)).toEqual(['alpha__whereami']);
    // Sessionless callers of another workspace, or of none, do not see ws1's decision.
    expect(find(await listOf(url, {}, '?workspace=file%3A%2F%2F%2Fws2'), 'beta').enablement).toBeUndefined();
    expect(find(await listOf(url), 'beta').enablement).toBeUndefined();

    // Session: enabling beta differs from what the session inherits (ws1's false): kept.
    items = await toggleOk(url, { id: betaId, enabled: true, scope: 'session' }, mine);
    expect(find(items, 'beta').enablement).toEqual([
      { kind: 'session', enabled: true },
      { kind: 'workspace', uri: 'file:///ws1', enabled: false },
    ]);
    await listChanged.waitFor(2);
    expect(await toolNames(client)).toEqual(['alpha__whereami', 'beta__whereami']);

    // Global false under both: all three, most specific first; the session's true still wins.
    items = await toggleOk(url, { id: betaId, enabled: false, scope: 'global' });
    expect(find(items, 'beta').enablement).toEqual([{ kind: 'global', enabled: false }]); // the admin's own (sessionless) view
    const three = find(await listOf(url, mine), 'beta').enablement;
    expect(three).toEqual([
      { kind: 'session', enabled: true },
      { kind: 'workspace', uri: 'file:///ws1', enabled: false },
      { kind: 'global', enabled: false },
    ]);

    // Setting a scope to what it would inherit removes its decision instead of storing another.
    items = await toggleOk(url, { id: betaId, enabled: false, scope: 'session' }, mine);
    expect(find(items, 'beta').enablement).toEqual([
      { kind: 'workspace', uri: 'file:///ws1', enabled: false },
      { kind: 'global', enabled: false },
    ]);
    items = await toggleOk(url, { id: betaId, enabled: false, scope: 'workspace', workspace: 'file:///ws1' });
    expect(find(items, 'beta').enablement).toEqual([{ kind: 'global', enabled: false }]);
    await toggleOk(url, { id: betaId, enabled: true, scope: 'global' });

    // The file holds durable keys and only what differs from the config: never ids, never sessions.
    const stored = JSON.parse(readFileSync(path.join(stateDir, 'enablement.json'), 'utf8'));
    expect(stored).toEqual({ version: 1, global: { 'config#mcp=alpha': true }, workspaces: {} });
    expect(JSON.stringify(stored)).not.toContain(alphaId);
  });

  it('keeps two sessions from seeing each other\'s session decisions, in lists, calls and watch streams', async () => {
    const { url } = await twoServers({ enabled: true });
    const a = await connectClient(cleanup, url, '2025');
    const b = await connectClient(cleanup, url, '2025');
    const aChanged = collectNotifications(a.client, 'notifications/tools/list_changed');
    const bChanged = collectNotifications(b.client, 'notifications/tools/list_changed');
    expect(await toolNames(a.client)).toEqual(['alpha__whereami', 'beta__whereami']);
    const alphaId = find(await listOf(url), 'alpha').id;
    const betaId = find(await listOf(url), 'beta').id;
    const bWatch = await openWatch(`${url}/customizations`, session(b.transport.sessionId));
    cleanup.add(() => bWatch.close());
    expect(find((await bWatch.next()).items, 'alpha').enablement).toBeUndefined();

    const aItems = await toggleOk(url, { id: alphaId, enabled: false, scope: 'session' }, session(a.transport.sessionId));
    expect(find(aItems, 'alpha').enablement).toEqual([{ kind: 'session', enabled: false }]);
    await aChanged.waitFor(1);
    expect(await toolNames(a.client)).toEqual(['beta__whereami']);
    expect(await toolNames(b.client)).toEqual(['alpha__whereami', 'beta__whereami']);
    // Hidden answers exactly like a name that never existed.
    const hidden = await errorOf(a.client.callTool({ name: 'alpha__whereami', arguments: {} }));
    const unknown = await errorOf(a.client.callTool({ name: 'gamma__whereami', arguments: {} }));
    expect(hidden.code).toBe(unknown.code);
    expect(hidden.message.replace('alpha', 'gamma')).toBe(unknown.message);
    // B still reaches it.
    expect(JSON.parse(textOf(await b.client.callTool({ name: 'alpha__whereami', arguments: {} }))).argv).toHaveLength(1);
    expect(find(await listOf(url, session(b.transport.sessionId)), 'alpha').enablement).toBeUndefined();

    // B's next event is the global change, not A's toggle: nothing of A's decision reached B.
    await toggleOk(url, { id: betaId, enabled: false, scope: 'global' });
    const next = await bWatch.next();
    expect(find(next.items, 'beta').enablement).toEqual([{ kind: 'global', enabled: false }]);
    expect(find(next.items, 'alpha').enablement).toBeUndefined();
    expect(JSON.stringify(next)).not.toContain('"session"');
    await bChanged.waitFor(1);
    await aChanged.waitFor(2);
    expect(await toolNames(b.client)).toEqual(['alpha__whereami']);
    expect(await toolNames(a.client)).toEqual([]);
  });

  it('serves portcullis://customizations per session and tells only the session whose list changed', async () => {
    const { url } = await twoServers({ enabled: true });
    const a = await connectClient(cleanup, url, '2025');
    const b = await connectClient(cleanup, url, '2025');
    const listed = (await a.client.listResources()).resources.map((r) => r.uri);
    expect(listed[0]).toBe('portcullis://customizations');
    const read = async (client: Client) => {
      const result = await client.readResource({ uri: 'portcullis://customizations' });
      const content = result.contents[0] as { mimeType?: string; text: string };
      expect(content.mimeType).toBe('application/json');
      return (JSON.parse(content.text) as { items: Item[] }).items;
    };
    expect((await read(a.client)).map((i) => i.name)).toEqual(['alpha', 'beta']);
    const aUpdated = collectNotifications(a.client, 'notifications/resources/updated');
    const bUpdated = collectNotifications(b.client, 'notifications/resources/updated');
    await a.client.subscribeResource({ uri: 'portcullis://customizations' });
    await b.client.subscribeResource({ uri: 'portcullis://customizations' });
    const alphaId = find(await read(a.client), 'alpha').id;

    await toggleOk(url, { id: alphaId, enabled: false, scope: 'session' }, session(a.transport.sessionId));
    expect((await aUpdated.waitFor(1))[0]).toEqual({ uri: 'portcullis://customizations' });
    expect(find(await read(a.client), 'alpha').enablement).toEqual([{ kind: 'session', enabled: false }]);
    expect(find(await read(b.client), 'alpha').enablement).toBeUndefined();

    // B hears of changes of its own list only (a global one), never of A's decisions.
    expect(bUpdated.items).toHaveLength(0);
    await toggleOk(url, { id: alphaId, enabled: false, scope: 'global' });
    await bUpdated.waitFor(1);
    expect(find(await read(b.client), 'alpha').enablement).toEqual([{ kind: 'global', enabled: false }]);

    // A 2026 request reads the view of the workspace it names (no session).
    const modern = await connectClient(cleanup, url, '2026');
    const result = await modern.client.request(
      { method: 'resources/read', params: { uri: 'portcullis://customizations', _meta: { 'portcullis/workspace': 'file:///ws9' } } },
      passThroughResult,
    );
    const items = JSON.parse((result.contents as Array<{ text: string }>)[0]!.text).items as Item[];
    expect(find(items, 'alpha').enablement).toEqual([{ kind: 'global', enabled: false }]);
  });

  it('hides a workspace decision from 2026 requests of other workspaces, and applies it to theirs', async () => {
    const { url } = await twoServers({ enabled: true });
    const betaId = find(await listOf(url), 'beta').id;
    await toggleOk(url, { id: betaId, enabled: false, scope: 'workspace', workspace: 'file:///ws1' });
    const modern = await connectClient(cleanup, url, '2026');
    const names = async (workspace?: string) => {
      const params = workspace === undefined ? {} : { _meta: { 'portcullis/workspace': workspace } };
      const result = await modern.client.request({ method: 'tools/list', params }, passThroughResult);
      return (result.tools as Array<{ name: string }>).map((t) => t.name).sort();
    };
    expect(await names('file:///ws1')).toEqual(['alpha__whereami']);
    expect(await names('file:///ws2')).toEqual(['alpha__whereami', 'beta__whereami']);
    expect(await names()).toEqual(['alpha__whereami', 'beta__whereami']);

    // A global decision changes what every sessionless caller sees: listeners hear of it.
    const changes = collectNotifications(modern.client, 'notifications/tools/list_changed');
    const subscription = await within(modern.client.listen({ toolsListChanged: true }), 10_000, 'subscriptions/listen');
    cleanup.add(() => subscription.close().catch(() => undefined));
    await toggleOk(url, { id: betaId, enabled: false, scope: 'global' });
    await changes.waitFor(1);
    expect(await names('file:///ws2')).toEqual(['alpha__whereami']);
  });

  it('takes a session\'s workspace from _meta["portcullis/workspace"] of its initialize', async () => {
    const { url } = await twoServers({ enabled: true });
    const betaId = find(await listOf(url), 'beta').id;
    await toggleOk(url, { id: betaId, enabled: false, scope: 'workspace', workspace: 'proj-a' });
    const init = JSON.parse(initializeBody());
    init.params._meta = { 'portcullis/workspace': 'proj-a' };
    const opened = await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: JSON.stringify(init) });
    const id = opened.headers['mcp-session-id'] as string;
    expect(opened.status).toBe(200);
    const sessionHeaders = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    await rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...sessionHeaders }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(find(await listOf(url, session(id)), 'beta').enablement).toEqual([{ kind: 'workspace', uri: 'proj-a', enabled: false }]);
    const listed = await rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...sessionHeaders }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    const tools = (messagesOf(listed)[0]!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools).toEqual(['alpha__whereami']);
    await rawRequest(url, { method: 'DELETE', headers: sessionHeaders });
    // The session is gone, and so is its view: its id reads nothing.
    expect((await rawRequest(`${url}/customizations`, { method: 'GET', headers: session(id) })).status).toBe(404);
  });

  it('disables every server of a plugin with its plugin, for one session or for all', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry() });
    const { gateway } = await startPluginGateway(cleanup, { plugins: [dir] });
    const url = gateway.url;
    const { client, transport } = await connectClient(cleanup, url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    await waitUntil(async () => find(await listOf(url), 'acme.where').state.kind === 'ready', 'plugin server ready');
    expect(await toolNames(client)).toEqual(['acme.where__whereami']);
    const pluginId = find(await listOf(url), 'acme').id;

    const items = await toggleOk(url, { id: pluginId, enabled: false, scope: 'session' }, session(transport.sessionId));
    expect(find(items, 'acme').enablement).toEqual([{ kind: 'session', enabled: false }]);
    expect(find(items, 'acme.where').enablement).toBeUndefined(); // the child's own: none; its container decides
    await changed.waitFor(1);
    expect(await toolNames(client)).toEqual([]);

    const global = await toggleOk(url, { id: pluginId, enabled: false, scope: 'global' });
    expect(find(global, 'acme').enablement).toEqual([{ kind: 'global', enabled: false }]);
    expect(find(global, 'acme.where').state).toEqual({ kind: 'stopped' });
  });
});
