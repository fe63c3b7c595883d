/**
 * The customisation list a real gateway publishes at `<path>/customizations`: configured servers
 * with their config file URI and entry range, plugins with their servers and agents (inline
 * ranges asserted against the manifest text), opaque stable ids, lifecycle states driven by a real
 * upstream that crashes and comes back, the watch stream of full replacements, and the same
 * Host/Origin guards and authentication as the MCP endpoint.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { bearerPrincipals, startGatewayFor } from '../integration/harness/principals.js';
import { rawRequest } from '../integration/harness/raw-http.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { fixture, sliceByRange, tempDir } from '../plugins/plugin-test-helpers.js';
import { startPluginGateway, WHEREAMI } from './plugin-test-gateway.js';
import { openWatch, type WatchedList } from './watch-reader.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

type Item = Record<string, any>;
const listOf = async (url: string, headers: Record<string, string> = {}): Promise<Item[]> => {
  const response = await fetch(`${url}/customizations`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return ((await response.json()) as { items: Item[] }).items;
};
const byName = (items: Item[], name: string): Item => {
  const found = items.find((i) => i.name === name);
  if (found === undefined) throw new Error(`no item ${name} in ${JSON.stringify(items.map((i) => i.name))}`);
  return found;
};

/**
 * A stdio server that refuses to start while `flag` exists and records its pid in `pidFile`
 * (so the test can crash it by pid), then runs the whereami fixture in the same process.
 */
const FLAPPY = `
const fs = require('node:fs');
const [flag, pidFile, server] = process.argv.slice(1);
if (fs.existsSync(flag)) process.exit(1);
fs.writeFileSync(pidFile, String(process.pid));
import(server);
`;

function flappyServer(dir: string) {
  const flag = path.join(dir, 'refuse-to-start');
  const pidFile = path.join(dir, 'pid');
  return { flag, pidFile, entry: { transport: 'stdio', command: process.execPath, args: ['-e', FLAPPY, flag, pidFile, WHEREAMI] } };
}

describe('the customisation list', () => {
  it('lists configured servers with the config file and their entry range, and plugins with their children', async () => {
    const dir = tempDir();
    const flappy = flappyServer(dir);
    const { gateway, configDir } = await startPluginGateway(cleanup, {
      servers: { flappy: flappy.entry },
      plugins: [fixture('open-plugins-valid'), { path: fixture('agent-plugins-valid'), enabled: false }, fixture('broken-json')],
    });
    const items = await waitUntil(async () => {
      const list = await listOf(gateway.url);
      return byName(list, 'flappy').state.kind === 'ready' && list;
    }, 'flappy ready');
    const configFile = path.join(configDir, 'gateway.json');
    const server = byName(items, 'flappy');
    expect(server).toMatchObject({ type: 'mcpServer', uri: pathToFileURL(configFile).href, state: { kind: 'ready' }, channel: `${gateway.url}/servers/flappy` });
    const entryText = sliceByRange(readFileSync(configFile, 'utf8'), server.range);
    expect(entryText.startsWith('"flappy"')).toBe(true);
    expect(JSON.parse(`{${entryText}}`)).toEqual({ flappy: flappy.entry });

    const plugin = byName(items, 'op-kit');
    expect(plugin).toMatchObject({ type: 'plugin', version: '0.3.0', load: { kind: 'loaded' } });
    expect(plugin.enablement).toBeUndefined();
    const manifest = path.join(fixture('open-plugins-valid'), '.plugin', 'plugin.json');
    const echo = byName(plugin.children, 'op-kit.echo');
    expect(echo.uri).toBe(pathToFileURL(manifest).href);
    expect(JSON.parse(`{${sliceByRange(readFileSync(manifest, 'utf8'), echo.range)}}`)).toEqual({
      echo: { command: './bin/server.mjs', args: ['${PLUGIN_ROOT}'], cwd: './bin' },
    });
    expect(byName(plugin.children, 'op-kit:helper')).toMatchObject({
      type: 'agent',
      description: 'Answers questions about the docs',
      disableModelInvocation: true,
    });
    await waitUntil(async () => byName(byName(await listOf(gateway.url), 'op-kit').children, 'op-kit.echo').state.kind === 'ready', 'plugin server ready');

    // A plugin the config disabled: its global decision and its servers stopped, never started.
    const disabled = byName(items, 'ap-tools');
    expect(disabled.enablement).toEqual([{ kind: 'global', enabled: false }]);
    expect(byName(disabled.children, 'ap-tools.files').state).toEqual({ kind: 'stopped' });
    expect(byName(disabled.children, 'ap-tools.files').channel).toBeUndefined();
    // A plugin whose manifest is broken: load error, nothing of it used.
    const broken = items.find((i) => i.type === 'plugin' && i.load.kind === 'error')!;
    expect(broken.children).toEqual([]);
  });

  it('gives every item an opaque id, stable for the gateway and distinct from every other', async () => {
    const { gateway } = await startPluginGateway(cleanup, { plugins: [fixture('open-plugins-valid'), fixture('claude-code-valid')] });
    const ids = (items: Item[]): string[] => items.flatMap((i) => [i.id, ...(i.children ?? []).map((c: Item) => c.id)]);
    const first = ids(await listOf(gateway.url));
    const second = ids(await listOf(gateway.url));
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    for (const id of first) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      for (const word of ['op-kit', 'cc-suite', 'echo', 'plugin', 'mcp']) expect(id).not.toContain(word);
    }
  });

  it('follows a real upstream through crash, failed restarts and recovery, never naming its command', async () => {
    const dir = tempDir();
    const flappy = flappyServer(dir);
    const { gateway } = await startPluginGateway(cleanup, { servers: { flappy: flappy.entry } });
    const watch = await openWatch(`${gateway.url}/customizations`);
    cleanup.add(() => watch.close());
    expect(watch.status).toBe(200);
    expect(watch.contentType).toBe('text/event-stream');
    const stateOf = (list: WatchedList) => (list.items.find((i) => i.name === 'flappy') as Item).state;
    let state = stateOf(await watch.next());
    while (state.kind !== 'ready') state = stateOf(await watch.next());

    writeFileSync(flappy.flag, '');
    process.kill(Number(readFileSync(flappy.pidFile, 'utf8')), 'SIGKILL');
    const seen: Item[] = [];
    do {
      state = stateOf(await watch.next());
      seen.push(state);
      if (state.kind === 'error' && existsSync(flappy.flag)) rmSync(flappy.flag);
    } while (state.kind !== 'ready');
    const kinds = seen.map((s) => s.kind).join(',');
    expect(kinds).toMatch(/^error,(starting,error,)*starting,ready$/);
    const error = seen[0]!;
    expect(error.error.errorType).toMatch(/^[A-Z_]+$/);
    expect(error.error.message).toContain('"flappy"');
    for (const secret of [flappy.flag, WHEREAMI, process.execPath, 'fs.existsSync']) expect(JSON.stringify(seen)).not.toContain(secret);
  });

  it('ends every watch stream when the gateway closes', async () => {
    const { gateway } = await startPluginGateway(cleanup, { plugins: [fixture('claude-code-valid')] });
    const watch = await openWatch(`${gateway.url}/customizations`);
    cleanup.add(() => watch.close());
    await watch.next();
    await gateway.close();
    await watch.ended();
  });

  it('answers other methods 405, toggles of an unknown id 404, and sits behind the Host guard', async () => {
    const { gateway } = await startPluginGateway(cleanup, {});
    const post = await rawRequest(`${gateway.url}/customizations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(405);
    expect(post.json().error?.code).toBe(-32600);
    const toggle = await rawRequest(`${gateway.url}/customizations/toggle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"x","enabled":false,"scope":"global"}' });
    expect(toggle.status).toBe(404);
    expect(toggle.json().error?.code).toBe(-32602);
    const getToggle = await rawRequest(`${gateway.url}/customizations/toggle`, { method: 'GET' });
    expect(getToggle.status).toBe(405);
    const rebinding = await rawRequest(`${gateway.url}/customizations`, { method: 'GET', headers: { host: 'attacker.example' } });
    expect(rebinding.status).toBe(403);
    expect(rebinding.body).not.toContain('items');
  });

  it('needs a principal when authentication is on', async () => {
    const principals = bearerPrincipals('alice');
    const gateway = await startGatewayFor(cleanup, principals, {});
    const anonymous = await rawRequest(`${gateway.url}/customizations`, { method: 'GET' });
    expect(anonymous.status).toBe(401);
    expect(await listOf(gateway.url, principals.headers('alice'))).toEqual([]);
    const watch = await rawRequest(`${gateway.url}/customizations?watch=1`, { method: 'GET' });
    expect(watch.status).toBe(401);
  });
});
