/**
 * Global enablement through a real gateway: a global disable stops the upstream for everyone
 * (its stdio children reaped, state `stopped`, every session told its list changed) and a
 * re-enable starts it again (`starting` → `ready`); decisions persist across a gateway restart
 * in the JSON state file and, with the Redis event store, in Redis.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { collectNotifications, connectClient, textOf } from '../integration/harness/clients.js';
import { Cleanup, waitUntil, within } from '../integration/harness/wait.js';
import { assertSharedRedis, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';
import { find, listOf, markedServer, pidsWith, toggleOk } from './enablement-helpers.js';
import { startPluginGateway } from './plugin-test-gateway.js';
import { openWatch } from './watch-reader.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

describe('global enablement', () => {
  it('stops a server for everyone, reaping its children, and starts it again on re-enable', async () => {
    const dice = markedServer();
    // One pooled connection: a stop that forgot the pooled one would leave a restarted pool full.
    // Per-session children (not the default principal isolation), so every kind of connection a
    // stop must close is open: the primary, the pooled one and a session's own.
    const { gateway } = await startPluginGateway(cleanup, { servers: { dice: { ...dice.entry, isolation: 'session' } }, statelessPool: { maxPerServer: 1 } });
    const url = gateway.url;
    const a = await connectClient(cleanup, url, '2025');
    const b = await connectClient(cleanup, url, '2025');
    const modern = await connectClient(cleanup, url, '2026');
    expect(JSON.parse(textOf(await modern.client.callTool({ name: 'dice__whereami', arguments: {} }))).argv).toEqual([dice.marker]);
    const aChanged = collectNotifications(a.client, 'notifications/tools/list_changed');
    const bChanged = collectNotifications(b.client, 'notifications/tools/list_changed');
    // A session's call spawns its own child beside the primary's and the pooled one.
    expect(JSON.parse(textOf(await a.client.callTool({ name: 'dice__whereami', arguments: {} }))).argv).toEqual([dice.marker]);
    expect(pidsWith(dice.marker).length).toBe(3);
    const watch = await openWatch(`${url}/customizations`);
    cleanup.add(() => watch.close());
    expect(find((await watch.next()).items, 'dice').state).toEqual({ kind: 'ready' });
    const id = find(await listOf(url), 'dice').id;

    const stopped = await toggleOk(url, { id, enabled: false, scope: 'global' });
    expect(find(stopped, 'dice')).toMatchObject({ enablement: [{ kind: 'global', enabled: false }], state: { kind: 'stopped' } });
    expect(find(stopped, 'dice').channel).toBeUndefined();
    // The toggle answers once every connection is closed: no child of the server is left.
    expect(pidsWith(dice.marker)).toEqual([]);
    await aChanged.waitFor(1);
    await bChanged.waitFor(1);
    expect((await a.client.listTools()).tools).toEqual([]);
    expect((await b.client.listTools()).tools).toEqual([]);
    const seen = await waitUntil(async () => {
      const event = await watch.next();
      return find(event.items, 'dice').state.kind === 'stopped' && event;
    }, 'watch sees stopped');
    expect(find(seen.items, 'dice').enablement).toEqual([{ kind: 'global', enabled: false }]);

    const started = await toggleOk(url, { id, enabled: true, scope: 'global' });
    expect(find(started, 'dice').state).toEqual({ kind: 'starting' });
    expect(find(started, 'dice').enablement).toBeUndefined(); // back to the config's: nothing stored
    const states: string[] = [];
    await waitUntil(async () => {
      const state = find((await watch.next()).items, 'dice').state.kind as string;
      if (states.at(-1) !== state) states.push(state);
      return state === 'ready';
    }, 'watch sees ready');
    expect(['stopped', 'starting', 'ready'].slice(-states.length)).toEqual(states); // in order, none skipped back
    await aChanged.waitFor(2);
    expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['dice__whereami']);
    expect(JSON.parse(textOf(await b.client.callTool({ name: 'dice__whereami', arguments: {} }))).argv).toEqual([dice.marker]);
    expect(JSON.parse(textOf(await modern.client.callTool({ name: 'dice__whereami', arguments: {} }))).argv).toEqual([dice.marker]);
    // The session whose own child was reaped gets a fresh one on its next call.
    expect(JSON.parse(textOf(await a.client.callTool({ name: 'dice__whereami', arguments: {} }))).argv).toEqual([dice.marker]);
  });

  it('keeps a global decision in the state file across a restart, and never starts the server', async () => {
    const dice = markedServer();
    const first = await startPluginGateway(cleanup, { servers: { dice: dice.entry } });
    const id = find(await listOf(first.gateway.url), 'dice').id;
    await toggleOk(first.gateway.url, { id, enabled: false, scope: 'global' });
    await toggleOk(first.gateway.url, { id, enabled: false, scope: 'workspace', workspace: 'file:///elsewhere' });
    await first.gateway.close();
    const file = path.join(first.stateDir, 'enablement.json');
    // The workspace decision equals what it inherits (global false): not stored.
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, global: { 'config#mcp=dice': false }, workspaces: {} });

    const { parseConfig } = await import('../../src/config/load.js');
    const { startGateway } = await import('../../src/gateway.js');
    const { silentLogger } = await import('../../src/observability/logger.js');
    const configFile = path.join(first.configDir, 'gateway.json');
    const raw = JSON.parse(readFileSync(configFile, 'utf8'));
    const second = await startGateway({ config: parseConfig(raw, { baseDir: first.configDir, file: configFile }), logger: silentLogger(), env: process.env });
    cleanup.add(() => within(second.close(), 15_000, 'gateway close'));
    const items = await listOf(second.url);
    expect(find(items, 'dice')).toMatchObject({ enablement: [{ kind: 'global', enabled: false }], state: { kind: 'stopped' } });
    expect(pidsWith(dice.marker)).toEqual([]);
    // Ids are per process; the decision followed the durable key.
    expect(find(items, 'dice').id).not.toBe(id);
    await toggleOk(second.url, { id: find(items, 'dice').id, enabled: true, scope: 'global' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, global: {}, workspaces: {} });
  });

  it('answers 503 and changes nothing when the state file cannot be written', async () => {
    const { rmSync, writeFileSync } = await import('node:fs');
    const { toggle } = await import('./enablement-helpers.js');
    const dice = markedServer();
    const { gateway, stateDir } = await startPluginGateway(cleanup, { servers: { dice: dice.entry } });
    const id = find(await listOf(gateway.url), 'dice').id;
    // The state directory's place is taken by a file: nothing can be written there any more.
    rmSync(stateDir, { recursive: true, force: true });
    writeFileSync(stateDir, 'not a directory');
    const refused = await toggle(gateway.url, { id, enabled: false, scope: 'global' });
    expect(refused.status).toBe(503);
    expect(refused.json().error).toMatchObject({ code: -32001, data: { code: 'ENABLEMENT_STORE_FAILED' } });
    expect(refused.headers['retry-after']).toBe('2');
    expect(find(await listOf(gateway.url), 'dice')).toMatchObject({ state: { kind: 'ready' } });
    expect(find(await listOf(gateway.url), 'dice').enablement).toBeUndefined();
    expect(pidsWith(dice.marker).length).toBeGreaterThan(0);
  });

  it('refuses to start on a state file it cannot read, naming the file and never a value', async () => {
    const { writeFileSync, mkdirSync } = await import('node:fs');
    const { tempDir } = await import('../plugins/plugin-test-helpers.js');
    const { gatewayConfig } = await import('../integration/harness/clients.js');
    const { startGateway } = await import('../../src/gateway.js');
    const { silentLogger } = await import('../../src/observability/logger.js');
    const stateDir = tempDir('portcullis-state-');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(path.join(stateDir, 'enablement.json'), '{"version":1,"global":{"config#mcp=x":"secret-ish"}}');
    const config = gatewayConfig({}, { stateDir });
    const error = await startGateway({ config, logger: silentLogger(), env: process.env }).then(
      (g) => g.close().then(() => undefined),
      (e: Error) => e,
    );
    expect(error?.message).toContain('enablement.json');
    expect(error?.message).not.toContain('secret-ish');
    expect(existsSync(path.join(stateDir, 'enablement.json'))).toBe(true);
  });
});

describe('global enablement with the Redis store', () => {
  beforeAll(() => assertSharedRedis());

  it('keeps decisions in Redis under durable keys across a restart', async () => {
    const dice = markedServer();
    const keyPrefix = uniquePrefix();
    const eventStore = { kind: 'redis', url: SHARED_REDIS_URL, allowPrivateNetwork: true, keyPrefix };
    const first = await startPluginGateway(cleanup, { servers: { dice: dice.entry }, eventStore });
    const id = find(await listOf(first.gateway.url), 'dice').id;
    await toggleOk(first.gateway.url, { id, enabled: false, scope: 'global' });
    await toggleOk(first.gateway.url, { id, enabled: true, scope: 'workspace', workspace: 'file:///ws1' });
    await first.gateway.close();
    // Nothing went to the file: Redis is the store.
    expect(existsSync(path.join(first.stateDir, 'enablement.json'))).toBe(false);
    const hash = await withRedis(SHARED_REDIS_URL, (client) => client.hGetAll(`${keyPrefix}enablement`));
    expect(hash).toEqual({ '["global","config#mcp=dice"]': '0', '["workspace","file:///ws1","config#mcp=dice"]': '1' });

    const second = await startPluginGateway(cleanup, { servers: { dice: dice.entry }, eventStore });
    const items = await listOf(second.gateway.url, {}, '?workspace=file%3A%2F%2F%2Fws1');
    expect(find(items, 'dice')).toMatchObject({
      enablement: [
        { kind: 'workspace', uri: 'file:///ws1', enabled: true },
        { kind: 'global', enabled: false },
      ],
      state: { kind: 'stopped' },
    });
    expect(pidsWith(dice.marker)).toEqual([]);
    await withRedis(SHARED_REDIS_URL, (client) => client.del(`${keyPrefix}enablement`));
  });
});
